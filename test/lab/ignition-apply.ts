import { request } from 'node:https';
import type { IgnitionConfig } from '@ccos/tools/lab';
import type { SshSession } from './ssh-session';

/** GETs `/config/worker` from the machine config server the way a host asks for it. */
export function fetchWorkerConfig(url: string, caPem: string, accept = 'application/vnd.coreos.ignition+json;version=3.2.0'): Promise<{ status: number; contentType: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/config/worker`, { ca: caPem, headers: { Accept: accept }, timeout: 10_000, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({
        status: res.statusCode ?? 0,
        contentType: String(res.headers['content-type'] ?? ''),
        body: Buffer.concat(chunks).toString(),
      }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The bytes of an Ignition `data:` URL (base64 or percent-encoded). */
export function decodeDataUrl(source: string): Buffer {
  const match = /^data:([^,]*),(.*)$/s.exec(source);
  if (match === null) {
    throw new Error(`not a data URL: ${source.slice(0, 40)}`);
  }
  const [, meta = '', data = ''] = match;
  return meta.endsWith(';base64') ? Buffer.from(data, 'base64') : Buffer.from(decodeURIComponent(data));
}

/**
 * What an agent does in APPLY_IGNITION, done over SSH for the test: write
 * the config's directories, files (with modes) and units (with drop-ins).
 */
export async function applyIgnition(session: SshSession, config: IgnitionConfig): Promise<void> {
  const run = async (command: string, stdin?: Buffer | string) => {
    const result = await session.exec(command, stdin);
    if (result.code !== 0) {
      throw new Error(`${command}: ${result.stderr}`);
    }
  };
  for (const dir of config.storage.directories) {
    await run(`mkdir -p '${dir.path}' && chmod ${dir.mode.toString(8)} '${dir.path}'`);
  }
  for (const file of config.storage.files) {
    await run(`mkdir -p "$(dirname '${file.path}')" && cat > '${file.path}' && chmod ${file.mode.toString(8)} '${file.path}'`, decodeDataUrl(file.contents.source));
  }
  for (const unit of config.systemd.units) {
    if (unit.contents !== undefined) {
      await run(`cat > '/etc/systemd/system/${unit.name}'`, unit.contents);
    }
    for (const dropin of unit.dropins ?? []) {
      await run(`mkdir -p '/etc/systemd/system/${unit.name}.d' && cat > '/etc/systemd/system/${unit.name}.d/${dropin.name}'`, dropin.contents);
    }
  }
}

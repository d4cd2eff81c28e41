import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './api-process';

/** The real Alertmanager (Debian's `prometheus-alertmanager`), alone on loopback: alerts are posted to it as Prometheus would. */
export const ALERTMANAGER = '/usr/bin/prometheus-alertmanager';

export interface Alertmanager {
  readonly url: string;
  /** Posts the alert as firing (for an hour), as Prometheus does while a rule fires. */
  fire(alertname: string): Promise<void>;
  /** Posts the alert as resolved (ended now). */
  resolve(alertname: string): Promise<void>;
  stop(): Promise<void>;
}

export async function startAlertmanager(): Promise<Alertmanager> {
  const dir = await mkdtemp(join(tmpdir(), 'ccos-alertmanager-'));
  const config = join(dir, 'alertmanager.yml');
  await writeFile(config, 'route:\n  receiver: nobody\nreceivers:\n  - name: nobody\n');
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(ALERTMANAGER, [
    `--config.file=${config}`, `--storage.path=${dir}`, `--web.listen-address=127.0.0.1:${port}`,
    // Alone: no gossip with other Alertmanagers.
    '--cluster.listen-address=',
  ], { stdio: ['ignore', 'ignore', 'pipe'] });
  let output = '';
  child.stderr?.on('data', (chunk: Buffer) => (output = `${output}${chunk.toString()}`.slice(-4000)));
  const post = async (alertname: string, endsAt: Date) => {
    const response = await fetch(`${url}/api/v2/alerts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([{ labels: { alertname, severity: 'warning' }, annotations: { summary: alertname }, startsAt: new Date(Date.now() - 60_000).toISOString(), endsAt: endsAt.toISOString() }]),
    });
    if (!response.ok) {
      throw new Error(`Alertmanager refused the alert: ${response.status} ${await response.text()}`);
    }
  };
  const stop = async () => {
    // Gone before its folder is: it writes its state there on the way out.
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      child.kill();
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };
  for (let attempt = 0; attempt < 100; attempt += 1) {
    if (child.exitCode !== null) {
      break;
    }
    const ready = await fetch(`${url}/-/ready`).then((response) => response.ok, () => false);
    if (ready) {
      return { url, fire: (name) => post(name, new Date(Date.now() + 3600_000)), resolve: (name) => post(name, new Date()), stop };
    }
    await new Promise((done) => setTimeout(done, 100));
  }
  await stop();
  throw new Error(`Alertmanager did not become ready: ${output}`);
}

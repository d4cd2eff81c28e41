import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';

/** Where the agent lives on every host. */
export const AGENT_DIR = '/opt/ccos-scaler';
export const AGENT_REMOTE_PATH = `${AGENT_DIR}/boot-worker`;

/** The agent executable the service copies to hosts, with its checksum. */
export interface AgentBinary {
  readonly path: string;
  readonly size: number;
  readonly sha256: string;
}

/** Reads the agent executable once at start; null when it has not been built. */
export async function loadAgentBinary(path: string): Promise<AgentBinary | null> {
  const info = await stat(path).catch(() => null);
  if (!info?.isFile()) {
    return null;
  }
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) {
    hash.update(chunk as Buffer);
  }
  return { path, size: info.size, sha256: hash.digest('hex') };
}

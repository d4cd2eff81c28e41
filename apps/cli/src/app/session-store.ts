import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/** What `login` keeps between runs. */
export interface StoredSession {
  readonly server: string;
  readonly token: string;
  readonly expiresAt: string;
  readonly username: string;
}

/** `$XDG_CONFIG_HOME/ccos-scaler/session.json`, by default under ~/.config. */
export function sessionFile(env: NodeJS.ProcessEnv): string {
  const base = env['XDG_CONFIG_HOME'] || join(env['HOME'] || homedir(), '.config');
  return join(base, 'ccos-scaler', 'session.json');
}

export async function readStoredSession(file: string): Promise<StoredSession | null> {
  try {
    const value = JSON.parse(await readFile(file, 'utf8')) as Partial<StoredSession>;
    return typeof value.token === 'string' && typeof value.server === 'string' ? (value as StoredSession) : null;
  } catch {
    return null;
  }
}

/** Writes the session readable by its owner alone (0600, in a 0700 folder), whatever was there before. */
export async function storeSession(file: string, session: StoredSession): Promise<void> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  await writeFile(file, `${JSON.stringify(session, null, 2)}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
}

export async function forgetSession(file: string): Promise<void> {
  await rm(file, { force: true });
}

import { randomBytes } from 'node:crypto';
import { closeSync, linkSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { identityAlive, isAncestorOfSelf, processStart } from './process-identity';

/**
 * The machine-wide lab lock. Every lab start holds it while it removes the
 * leftovers of dead labs and takes its slice of the network; removing
 * someone else's lab holds it too. Labs themselves run without it, side by
 * side.
 *
 * A test file may still hold it from before `startLab` until after
 * `lab.stop()` (nested calls in one process share it, and so do the child
 * processes the holder starts while it holds it); that only makes lab
 * starts on the machine wait for that file:
 *
 * ```ts
 * let releaseLab: () => Promise<void> = async () => undefined;
 * beforeAll(async () => { releaseLab = await acquireLabLock(); lab = await startLab(...); });
 * afterAll(async () => { await lab?.stop(); await releaseLab(); });
 * ```
 *
 * The lock is a file created with O_EXCL holding the owner's pid (first
 * line), a token, and who it is. A lock whose pid is gone (or was reused by
 * another process, told by the start time) is stale and taken over. The
 * format is the one earlier versions of the lab wrote, so they wait for
 * this code and it waits for them.
 */
export const LAB_LOCK_PATH = process.env['CCOS_LAB_LOCK'] ?? '/run/ccos-lab.lock';

/** How long {@link acquireLabLock} waits for another holder by default. */
export const LAB_LOCK_TIMEOUT_MS = 10 * 60_000;

/** Options of {@link acquireLabLock}. */
export interface LabLockOptions {
  readonly path?: string;
  readonly timeoutMs?: number;
  /** Told once when the lock is held by someone else, so a slow start has a reason in the log. */
  readonly onWait?: (holder: LabLockHolder) => void;
  /** Whether the processes this one starts while holding it share it (default true). */
  readonly inheritable?: boolean;
}

/** Who holds the lock. */
export interface LabLockHolder {
  readonly pid: number;
  readonly token: string;
  readonly command: string;
  readonly since: string;
  /** The process start time (clock ticks since boot, /proc/PID/stat field 22), to spot a reused pid. */
  readonly processStart: string | null;
}

/** A lock file that stays unparsable this long (a writer that died between create and write) is stale. */
const HALF_WRITTEN_GRACE_MS = 5_000;

/**
 * Set while this process holds the lock, so the processes it starts (a demo,
 * the lab CLI) share it instead of waiting for their own parent.
 */
const INHERITED_TOKEN_ENV = 'CCOS_LAB_LOCK_TOKEN';

const held = new Map<string, { count: number; token: string; inheritedBefore: string | undefined }>();

/**
 * Takes the machine-wide lab lock, waiting up to 10 minutes for another
 * holder; returns the function that releases it. Nested calls in one
 * process share the lock, and so does a child of the holder.
 */
export async function acquireLabLock(options: LabLockOptions = {}): Promise<() => Promise<void>> {
  const path = options.path ?? LAB_LOCK_PATH;
  const mine = held.get(path);
  if (mine !== undefined) {
    mine.count += 1;
    return releaser(path, mine.token);
  }
  const inheritable = options.inheritable ?? true;
  if (inheritable && heldByAncestor(path)) {
    return async () => undefined;
  }
  const deadline = Date.now() + (options.timeoutMs ?? LAB_LOCK_TIMEOUT_MS);
  const token = randomBytes(8).toString('hex');
  let told = false;
  for (let delay = 50; ; delay = Math.min(delay * 2, 1_000)) {
    if (tryCreate(path, token)) {
      held.set(path, { count: 1, token, inheritedBefore: process.env[INHERITED_TOKEN_ENV] });
      if (inheritable) {
        process.env[INHERITED_TOKEN_ENV] = token;
      }
      process.once('exit', () => removeIfMine(path, token));
      return releaser(path, token);
    }
    const holder = readHolder(path);
    if (holder === 'gone') {
      continue;
    }
    if (holder === null ? halfWrittenTooLong(path) : !holderAlive(holder)) {
      takeOverStale(path, holder);
      continue;
    }
    if (holder !== null && !told) {
      told = true;
      options.onWait?.(holder);
    }
    if (Date.now() > deadline) {
      const who = holder === null ? 'a process that is still writing it' : `pid ${holder.pid} (${holder.command}) since ${holder.since}`;
      throw new Error(`the lab lock ${path} is held by ${who}; waited ${Math.round((options.timeoutMs ?? LAB_LOCK_TIMEOUT_MS) / 1000)} s. Wait for that run to finish, or remove the file if that process is not using the lab.`);
    }
    await sleep(delay);
  }
}

function releaser(path: string, token: string): () => Promise<void> {
  let released = false;
  return async () => {
    if (released) {
      return;
    }
    released = true;
    const mine = held.get(path);
    if (mine === undefined || mine.token !== token) {
      return;
    }
    mine.count -= 1;
    if (mine.count === 0) {
      held.delete(path);
      if (process.env[INHERITED_TOKEN_ENV] === token) {
        if (mine.inheritedBefore === undefined) {
          delete process.env[INHERITED_TOKEN_ENV];
        } else {
          process.env[INHERITED_TOKEN_ENV] = mine.inheritedBefore;
        }
      }
      removeIfMine(path, token);
    }
  };
}

function tryCreate(path: string, token: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o644);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
      return false;
    }
    throw error;
  }
  try {
    const info = { token, command: process.argv.slice(1).join(' ').slice(0, 200), since: new Date().toISOString(), processStart: processStart(process.pid) };
    writeSync(fd, `${process.pid}\n${JSON.stringify(info)}\n`);
  } finally {
    closeSync(fd);
  }
  return true;
}

/** The holder, null while the file is (half) written, or `gone` when it vanished meanwhile. */
function readHolder(path: string): LabLockHolder | null | 'gone' {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return 'gone';
  }
  const [pidLine, infoLine] = text.split('\n');
  const pid = Number.parseInt(pidLine ?? '', 10);
  if (!Number.isInteger(pid) || pid <= 0) {
    return null;
  }
  try {
    const info = JSON.parse(infoLine ?? '{}') as Partial<LabLockHolder>;
    return { pid, token: info.token ?? '', command: info.command ?? 'unknown', since: info.since ?? 'unknown', processStart: info.processStart ?? null };
  } catch {
    // Someone else's format: a bare pid is enough.
    return { pid, token: '', command: 'unknown', since: 'unknown', processStart: null };
  }
}

function holderAlive(holder: LabLockHolder): boolean {
  return identityAlive(holder);
}

/** Whether the lock is held by a parent of this process that passed its token down. */
function heldByAncestor(path: string): boolean {
  const inherited = process.env[INHERITED_TOKEN_ENV];
  if (inherited === undefined || inherited === '') {
    return false;
  }
  const holder = readHolder(path);
  return holder !== null && holder !== 'gone' && holder.token === inherited && holder.pid !== process.pid
    && holderAlive(holder) && isAncestorOfSelf(holder.pid);
}

function halfWrittenTooLong(path: string): boolean {
  try {
    return Date.now() - statSync(path).mtimeMs > HALF_WRITTEN_GRACE_MS;
  } catch {
    return false;
  }
}

/**
 * Removes a stale lock without racing another waiter: the file is renamed
 * aside (atomic), and if what was moved turns out to be a live lock that
 * replaced the stale one meanwhile, it is linked back (link never
 * overwrites).
 */
function takeOverStale(path: string, seen: LabLockHolder | null): void {
  const aside = `${path}.stale-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    renameSync(path, aside);
  } catch {
    return;
  }
  const moved = readHolder(aside);
  const stillStale = moved === 'gone' || moved === null ? seen === null : !holderAlive(moved);
  if (!stillStale) {
    try {
      linkSync(aside, path);
    } catch {
      // A third process took the lock meanwhile; the moved holder will find its file gone.
    }
  }
  try {
    unlinkSync(aside);
  } catch {
    // Already gone.
  }
}

function removeIfMine(path: string, token: string): void {
  const holder = readHolder(path);
  if (holder !== null && holder !== 'gone' && holder.pid === process.pid && holder.token === token) {
    try {
      unlinkSync(path);
    } catch {
      // Already gone.
    }
  }
}

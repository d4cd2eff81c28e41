import { posix } from 'node:path';
import { describeExit, sha256Of, succeeded, type CommandResult, type Executor, type FileSystem, type JsonObject } from '@ccos/agent/util-host';
import { HOST_PATHS } from '../host-paths';
import type { IgnitionPlan, Ownership } from './ignition-config';

/** What applying changed, for the SUCCEEDED detail. */
export interface AppliedIgnition {
  readonly directories: JsonObject[];
  readonly files: JsonObject[];
  readonly links: JsonObject[];
  readonly units: JsonObject[];
  /** Every file the config puts on the host (files, units, drop-ins), path → SHA-256 of its contents. */
  readonly written: Record<string, string>;
}

/** Applying stopped at `path`; `command` when a systemctl call failed. */
export class ApplyError extends Error {
  constructor(
    message: string,
    readonly path: string,
    readonly command?: CommandResult,
  ) {
    super(message);
    this.name = 'ApplyError';
  }
}

interface Ids {
  readonly users: Map<string, number>;
  readonly groups: Map<string, number>;
}

async function readIds(fs: FileSystem): Promise<Ids> {
  const table = async (path: string) => {
    const text = await fs.readFile(path).then((data) => data.toString('utf8'), () => '');
    return new Map(text.split('\n').filter((line) => line.includes(':')).map((line) => {
      const [name = '', , id = ''] = line.split(':');
      return [name, Number(id)] as const;
    }).filter(([, id]) => Number.isInteger(id)));
  };
  const users = await table(HOST_PATHS.passwd);
  const groups = await table(HOST_PATHS.group);
  // root is uid/gid 0 on every host, even one whose /etc/passwd cannot be read.
  users.set('root', users.get('root') ?? 0);
  groups.set('root', groups.get('root') ?? 0);
  return { users, groups };
}

/**
 * Writes an {@link IgnitionPlan} to the host in Ignition's order
 * (directories, files, links, units) and then runs systemd: daemon-reload,
 * mask, enable/disable. Idempotent: unchanged files are not rewritten, an
 * `append` already at the end of a file is not appended again, and a file
 * with `overwrite: false` is accepted when it already holds the contents.
 */
export async function applyIgnitionPlan(plan: IgnitionPlan, fs: FileSystem, exec: Executor): Promise<AppliedIgnition> {
  let ids: Ids | null = null;
  const owner = async (path: string, wanted: Ownership): Promise<void> => {
    if (wanted.userId === undefined && wanted.userName === undefined && wanted.groupId === undefined && wanted.groupName === undefined) {
      return;
    }
    ids ??= await readIds(fs);
    const uid = wanted.userId ?? (wanted.userName === undefined ? 0 : ids.users.get(wanted.userName));
    const gid = wanted.groupId ?? (wanted.groupName === undefined ? 0 : ids.groups.get(wanted.groupName));
    if (uid === undefined || gid === undefined) {
      throw new ApplyError(`${path}: ${uid === undefined ? `user "${wanted.userName}"` : `group "${wanted.groupName}"`} does not exist on this host`, path);
    }
    const info = await fs.stat(path);
    if (info !== null && (info.uid !== uid || info.gid !== gid)) {
      await fs.chown(path, uid, gid);
    }
  };
  const ensureParent = (path: string) => fs.mkdir(posix.dirname(path), { mode: 0o755 });

  const directories: JsonObject[] = [];
  for (const dir of plan.directories) {
    const info = await fs.stat(dir.path);
    if (info !== null && info.type !== 'directory') {
      if (!dir.overwrite) {
        throw new ApplyError(`${dir.path} exists and is not a directory (overwrite is false)`, dir.path);
      }
      await fs.remove(dir.path);
    }
    await fs.mkdir(dir.path, { mode: dir.mode });
    const after = await fs.stat(dir.path);
    if (after?.mode !== dir.mode) {
      await fs.chmod(dir.path, dir.mode);
    }
    await owner(dir.path, dir);
    directories.push({ path: dir.path, mode: octal(dir.mode), created: info === null });
  }

  const written: Record<string, string> = {};
  const files: JsonObject[] = [];
  for (const file of plan.files) {
    const info = await fs.stat(file.path);
    if (info !== null && info.type !== 'file') {
      if (!file.overwrite) {
        throw new ApplyError(`${file.path} exists and is not a regular file (overwrite is false)`, file.path);
      }
      await fs.remove(file.path);
    }
    const existing = info?.type === 'file' ? await fs.readFile(file.path) : null;
    const appended = Buffer.concat(file.append);
    let wanted: Buffer;
    if (existing === null || file.overwrite) {
      wanted = Buffer.concat([file.contents ?? Buffer.alloc(0), appended]);
    } else if (file.contents !== null) {
      // overwrite: false and the file is there: fine only if it already holds these contents.
      const full = Buffer.concat([file.contents, appended]);
      if (!existing.equals(full) && !existing.equals(file.contents)) {
        throw new ApplyError(`${file.path} exists with other contents and overwrite is false`, file.path);
      }
      wanted = full;
    } else {
      // No contents: keep the file, add the appends unless a re-run already added them.
      wanted = appended.length > 0 && !endsWith(existing, appended) ? Buffer.concat([existing, appended]) : existing;
    }
    const changed = existing === null || !existing.equals(wanted);
    if (changed) {
      await ensureParent(file.path);
      await fs.writeFileAtomic(file.path, wanted, { mode: file.mode, sync: true });
    } else if (info?.mode !== file.mode) {
      await fs.chmod(file.path, file.mode);
    }
    await owner(file.path, file);
    files.push({ path: file.path, mode: octal(file.mode), bytes: wanted.length, changed });
    written[file.path] = sha256Of(wanted);
  }

  const links: JsonObject[] = [];
  for (const link of plan.links) {
    const info = await fs.stat(link.path);
    if (info?.type === 'symlink' && (await fs.readlink(link.path)) === link.target) {
      links.push({ path: link.path, target: link.target, changed: false });
      continue;
    }
    if (info !== null) {
      if (!link.overwrite) {
        throw new ApplyError(`${link.path} exists and overwrite is false`, link.path);
      }
      await fs.remove(link.path);
    }
    await ensureParent(link.path);
    await fs.symlink(link.target, link.path);
    await owner(link.path, link);
    links.push({ path: link.path, target: link.target, changed: true });
  }

  const units: JsonObject[] = [];
  if (plan.units.length > 0) {
    await fs.mkdir(HOST_PATHS.systemdDir, { mode: 0o755 });
  }
  for (const unit of plan.units) {
    let changed = false;
    if (unit.contents !== undefined) {
      changed = (await writeIfChanged(fs, `${HOST_PATHS.systemdDir}/${unit.name}`, unit.contents)) || changed;
      written[`${HOST_PATHS.systemdDir}/${unit.name}`] = sha256Of(unit.contents);
    }
    for (const dropin of unit.dropins) {
      const dir = `${HOST_PATHS.systemdDir}/${unit.name}.d`;
      await fs.mkdir(dir, { mode: 0o755 });
      changed = (await writeIfChanged(fs, `${dir}/${dropin.name}`, dropin.contents)) || changed;
      written[`${dir}/${dropin.name}`] = sha256Of(dropin.contents);
    }
    units.push({
      name: unit.name,
      changed,
      dropins: unit.dropins.map((dropin) => dropin.name),
      ...(unit.enabled === undefined ? {} : { enabled: unit.enabled }),
      ...(unit.mask ? { masked: true } : {}),
    });
  }

  if (plan.units.length > 0) {
    await systemctl(exec, ['daemon-reload'], HOST_PATHS.systemdDir);
    const masked = plan.units.filter((unit) => unit.mask).map((unit) => unit.name);
    const enable = plan.units.filter((unit) => unit.enabled === true && !unit.mask).map((unit) => unit.name);
    const disable = plan.units.filter((unit) => unit.enabled === false && !unit.mask).map((unit) => unit.name);
    if (masked.length > 0) {
      await systemctl(exec, ['mask', ...masked], masked.join(' '));
    }
    if (enable.length > 0) {
      await systemctl(exec, ['enable', ...enable], enable.join(' '));
    }
    if (disable.length > 0) {
      await systemctl(exec, ['disable', ...disable], disable.join(' '));
    }
  }
  return { directories, files, links, units, written };
}

async function writeIfChanged(fs: FileSystem, path: string, contents: string): Promise<boolean> {
  const current = await fs.readFile(path).catch(() => null);
  if (current !== null && current.equals(Buffer.from(contents))) {
    return false;
  }
  await fs.writeFileAtomic(path, contents, { mode: 0o644, sync: true });
  return true;
}

async function systemctl(exec: Executor, args: readonly string[], what: string): Promise<void> {
  const result = await exec.run(['systemctl', ...args], { timeoutMs: 120_000 });
  if (!succeeded(result)) {
    throw new ApplyError(`systemctl ${args.join(' ')} failed: ${describeExit(result)}`, what, result);
  }
}

function endsWith(data: Buffer, suffix: Buffer): boolean {
  return suffix.length <= data.length && data.subarray(data.length - suffix.length).equals(suffix);
}

function octal(mode: number): string {
  return `0${mode.toString(8)}`;
}

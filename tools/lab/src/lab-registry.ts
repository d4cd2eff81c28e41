import { randomInt } from 'node:crypto';
import { mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LAB_ID_PATTERN, LAB_NAME_PREFIX, LAB_ROOT, REGISTRY_DIR } from './lab-layout';
import { allocateSubnet } from './lab-network';
import { identityAlive, type ProcessIdentity } from './process-identity';
import { runCommand } from './run-command';

/**
 * Which lab owns which slice of the network, one file per lab
 * (`<root>/registry/<id>.json`). An entry is written, under the lab lock,
 * before the lab creates anything, and removed after everything it created
 * is gone; so a lab whose owner died is found, and cleaned, from its entry.
 * The owner is the process that holds the lab's VIP services: the one that
 * called startLab, or the CLI's daemon.
 */
export interface LabRegistryEntry {
  readonly id: string;
  readonly subnet: string;
  readonly owner: ProcessIdentity;
  /** What the lab is for (`demo`, a test), shown by `lab status`. */
  readonly name?: string;
  readonly createdAt: string;
}

/** Every registered lab, by id order. Unreadable entries are skipped. */
export async function readRegistry(): Promise<LabRegistryEntry[]> {
  const files = await readdir(REGISTRY_DIR).catch(() => [] as string[]);
  const entries = await Promise.all(files.filter((file) => file.endsWith('.json')).map(async (file) => {
    try {
      const entry = JSON.parse(await readFile(join(REGISTRY_DIR, file), 'utf8')) as LabRegistryEntry;
      return LAB_ID_PATTERN.test(entry.id) && `${entry.id}.json` === file ? entry : null;
    } catch {
      return null;
    }
  }));
  return entries.filter((entry): entry is LabRegistryEntry => entry !== null).sort((a, b) => a.id.localeCompare(b.id));
}

/** One lab's entry, or null. */
export async function readEntry(id: string): Promise<LabRegistryEntry | null> {
  return (await readRegistry()).find((entry) => entry.id === id) ?? null;
}

/** Whether the entry's owner still runs. */
export function ownerAlive(entry: LabRegistryEntry): boolean {
  return identityAlive(entry.owner);
}

/** Writes (or replaces) an entry atomically: readers never see half of one. */
export async function writeEntry(entry: LabRegistryEntry): Promise<void> {
  await mkdir(REGISTRY_DIR, { recursive: true, mode: 0o755 });
  const file = join(REGISTRY_DIR, `${entry.id}.json`);
  const temp = `${file}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify(entry, null, 2)}\n`, { mode: 0o644 });
  await rename(temp, file);
}

/**
 * When each slice's last lab ended (`<root>/released-slices.json`, CIDR → ms since the epoch):
 * a new lab gets the slice released longest ago (allocateSubnet). Written under the lab lock;
 * unreadable means no history, which only makes the choice less careful.
 */
const RELEASED_FILE = join(LAB_ROOT, 'released-slices.json');

export async function readReleasedSlices(): Promise<Map<string, number>> {
  try {
    const parsed = JSON.parse(await readFile(RELEASED_FILE, 'utf8')) as Record<string, unknown>;
    return new Map(Object.entries(parsed).filter((pair): pair is [string, number] => typeof pair[1] === 'number'));
  } catch {
    return new Map();
  }
}

/** Removes an entry (the lab's slice is free again, and noted as released now). */
export async function removeEntry(id: string): Promise<void> {
  const entry = await readEntry(id);
  await rm(join(REGISTRY_DIR, `${id}.json`), { force: true });
  if (entry !== null) {
    const released = await readReleasedSlices();
    released.set(entry.subnet, Date.now());
    await mkdir(LAB_ROOT, { recursive: true, mode: 0o755 });
    const temp = `${RELEASED_FILE}.${process.pid}.tmp`;
    await writeFile(temp, `${JSON.stringify(Object.fromEntries(released), null, 2)}\n`, { mode: 0o644 });
    await rename(temp, RELEASED_FILE);
  }
}

/**
 * Picks an id and a slice for a new lab and registers it for `owner`. Call
 * it holding the lab lock, after the dead labs are cleaned up; the id is
 * one that names nothing on the machine yet, and none of `avoidIds` (labs
 * just removed, so logs never mix two labs under one id).
 */
export async function registerLab(hosts: number, owner: ProcessIdentity, name?: string, avoidIds: readonly string[] = []): Promise<LabRegistryEntry> {
  const registry = await readRegistry();
  const network = allocateSubnet(hosts, registry.map((entry) => entry.subnet), await readReleasedSlices());
  if (network === null) {
    const labs = registry.map((entry) => `${entry.id} ${entry.subnet} (pid ${entry.owner.pid}${entry.name === undefined ? '' : `, ${entry.name}`})`);
    throw new Error(`no room for a lab of ${hosts} hosts in the test range: labs up are ${labs.join('; ')}. Stop one (npm run lab -- status shows them).`);
  }
  const taken = new Set([...registry.map((entry) => entry.id), ...avoidIds, ...(await idsInUse())]);
  const id = freeId(taken);
  const entry: LabRegistryEntry = {
    id,
    subnet: network.subnet,
    owner,
    ...(name === undefined ? {} : { name }),
    createdAt: new Date().toISOString(),
  };
  await writeEntry(entry);
  return entry;
}

const FIRST = 'abcdefghijklmnopqrstuvwxyz';
const SECOND = `${FIRST}0123456789`;

function freeId(taken: ReadonlySet<string>): string {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const id = `${FIRST[randomInt(FIRST.length)]}${SECOND[randomInt(SECOND.length)]}`;
    if (!taken.has(id)) {
      return id;
    }
  }
  const id = [...FIRST].flatMap((a) => [...SECOND].map((b) => `${a}${b}`)).find((candidate) => !taken.has(candidate));
  if (id === undefined) {
    throw new Error('every lab id is in use');
  }
  return id;
}

/** Ids that name something on the machine: a folder under the root, a link or a network namespace. */
async function idsInUse(): Promise<string[]> {
  const folders = await readdir(LAB_ROOT).catch(() => [] as string[]);
  const netns = await readdir('/run/netns').catch(() => [] as string[]);
  const { stdout } = await runCommand(['ip', '-o', 'link', 'show'], { allowFailure: true });
  const links = stdout.split('\n').map((line) => /^\d+:\s+([^:@\s]+)/.exec(line)?.[1] ?? '');
  const fromNames = [...netns, ...links]
    .filter((name) => name.startsWith(LAB_NAME_PREFIX))
    .map((name) => name.slice(LAB_NAME_PREFIX.length, LAB_NAME_PREFIX.length + 2));
  return [...folders, ...fromNames].filter((id) => LAB_ID_PATTERN.test(id));
}

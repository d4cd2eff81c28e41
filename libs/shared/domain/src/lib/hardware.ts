/** A block device of a host (partitions, loop, RAM and optical devices left out). */
export interface HostDisk {
  readonly name: string;
  readonly sizeBytes: number;
  /** True for a spinning disk, false for an SSD or NVMe; null when the kernel does not say. */
  readonly rotational: boolean | null;
}

/** A network interface of a host (the loopback left out). */
export interface HostNic {
  readonly name: string;
  /** Lower-case, colon-separated; null when it has none. */
  readonly mac: string | null;
  /** The kernel's operstate: `up`, `down`, `unknown`, … */
  readonly state: string;
}

/** What a host is made of, read over SSH when it is added (and when it is inspected again). */
export interface HardwareFacts {
  readonly cpus: number | null;
  readonly cpuModel: string | null;
  readonly memoryBytes: number | null;
  readonly disks: readonly HostDisk[];
  readonly nics: readonly HostNic[];
  /** DMI: the system's vendor, product and serial number (the serial is readable by root only). */
  readonly systemVendor: string | null;
  readonly systemProduct: string | null;
  readonly systemSerial: string | null;
}

/**
 * The least a host must have: a pool's profile (what cluster-autoscaler plans each of its nodes
 * with), or a cluster's default for every host added to it. Zero (or absent) asks nothing.
 */
export interface HardwareMinimums {
  readonly cpus: number;
  readonly memoryBytes: number;
  /** The largest disk of the host must be at least this big. */
  readonly diskBytes?: number;
  /** Label keys every host must be given (a zone, a rack): a host added without one of them is refused. */
  readonly labelKeys?: readonly string[];
}

/** A named check of a host against minimums, as the Assisted Installer names its host validations. */
export interface HardwareValidation {
  readonly id: 'has-min-cpu-cores' | 'has-min-memory' | 'has-min-disk' | 'has-labels';
  readonly found: number;
  readonly wanted: number;
  /** `has-min-memory: 3.8 GiB < 8 GiB`. */
  readonly text: string;
}

/**
 * The validations a host fails against minimums. Memory is MemTotal, what the kubelet reports as
 * the Node's capacity (a little under the RAM installed); disk is the host's largest disk. What
 * the host did not tell (facts from before hardware was read, a host that lists no disk) fails
 * nothing.
 */
export function failedHardwareValidations(hardware: (Pick<HardwareFacts, 'cpus' | 'memoryBytes'> & { readonly disks?: readonly HostDisk[] }) | undefined, minimums: HardwareMinimums): HardwareValidation[] {
  const failed: HardwareValidation[] = [];
  if (hardware?.cpus != null && minimums.cpus > 0 && hardware.cpus < minimums.cpus) {
    failed.push({ id: 'has-min-cpu-cores', found: hardware.cpus, wanted: minimums.cpus, text: `has-min-cpu-cores: ${hardware.cpus} < ${minimums.cpus}` });
  }
  if (hardware?.memoryBytes != null && minimums.memoryBytes > 0 && hardware.memoryBytes < minimums.memoryBytes) {
    failed.push({ id: 'has-min-memory', found: hardware.memoryBytes, wanted: minimums.memoryBytes, text: `has-min-memory: ${gib(hardware.memoryBytes)} < ${gib(minimums.memoryBytes)}` });
  }
  const disks = hardware?.disks ?? [];
  const wantedDisk = minimums.diskBytes ?? 0;
  const largestDisk = Math.max(0, ...disks.map((disk) => disk.sizeBytes));
  if (disks.length > 0 && wantedDisk > 0 && largestDisk < wantedDisk) {
    failed.push({ id: 'has-min-disk', found: largestDisk, wanted: wantedDisk, text: `has-min-disk: ${gib(largestDisk)} < ${gib(wantedDisk)}` });
  }
  return failed;
}

/** The has-labels validation: the label keys the minimums ask for that the host was not given; null when none is missing. */
export function missingLabelValidation(labels: ReadonlyArray<{ readonly key: string }>, minimums: Pick<HardwareMinimums, 'labelKeys'>): HardwareValidation | null {
  const wanted = minimums.labelKeys ?? [];
  const missing = wanted.filter((key) => !labels.some((label) => label.key === key));
  return missing.length > 0 ? { id: 'has-labels', found: wanted.length - missing.length, wanted: wanted.length, text: `has-labels: missing ${missing.join(', ')}` } : null;
}

function gib(bytes: number): string {
  return `${Number((bytes / 2 ** 30).toFixed(1))} GiB`;
}

/** What a host told at two inspections, as far as a change between them matters to an operator. */
export interface InspectedHost {
  readonly osRelease?: string | null;
  readonly kernel?: string | null;
  readonly hardware?: HardwareFacts | null;
}

/** One thing that differs between two inspections of a host: a field, or one disk or NIC by name. */
export interface HardwareChange {
  readonly field: 'cpus' | 'cpuModel' | 'memoryBytes' | 'disk' | 'nic' | 'system' | 'osRelease' | 'kernel';
  /** The disk's or NIC's name; null for the host's own fields. */
  readonly item: string | null;
  /** As shown: `8`, `15.5 GiB`, `sda 480 GiB SSD`, `eth0 52:54:00:12:34:56 up`; null when it was not there. */
  readonly before: string | null;
  readonly after: string | null;
}

const diskText = (disk: HostDisk): string => `${disk.name} ${gib(disk.sizeBytes)}${disk.rotational === null ? '' : disk.rotational ? ' HDD' : ' SSD'}`;
const nicText = (nic: HostNic): string => `${nic.name} ${nic.mac ?? '-'} ${nic.state}`;

/** The disks or NICs added, gone or changed between two inspections, by name. */
function itemChanges<T extends { readonly name: string }>(field: 'disk' | 'nic', before: readonly T[], after: readonly T[], text: (item: T) => string): HardwareChange[] {
  const earlier = new Map(before.map((item) => [item.name, text(item)]));
  const later = new Map(after.map((item) => [item.name, text(item)]));
  return [...new Set([...earlier.keys(), ...later.keys()])]
    .sort()
    .filter((name) => earlier.get(name) !== later.get(name))
    .map((name) => ({ field, item: name, before: earlier.get(name) ?? null, after: later.get(name) ?? null }));
}

/**
 * What changed between two inspections of a host: CPUs, memory, the CPU model, each disk and NIC
 * (added, gone, resized, a new MAC, link state), the system's DMI names, the OS and kernel. A value
 * the earlier inspection did not read (facts from before hardware was read) is no change.
 */
export function hardwareChanges(before: InspectedHost, after: InspectedHost): HardwareChange[] {
  const changes: HardwareChange[] = [];
  const scalar = (field: HardwareChange['field'], was: string | null | undefined, now: string | null | undefined) => {
    if (was != null && was !== (now ?? null)) {
      changes.push({ field, item: null, before: was, after: now ?? null });
    }
  };
  const was = before.hardware;
  const now = after.hardware;
  scalar('cpus', was?.cpus == null ? null : String(was.cpus), now?.cpus == null ? null : String(now.cpus));
  scalar('cpuModel', was?.cpuModel, now?.cpuModel);
  scalar('memoryBytes', was?.memoryBytes == null ? null : gib(was.memoryBytes), now?.memoryBytes == null ? null : gib(now.memoryBytes));
  if (was) {
    changes.push(...itemChanges('disk', was.disks, now?.disks ?? [], diskText), ...itemChanges('nic', was.nics, now?.nics ?? [], nicText));
    const system = (facts: HardwareFacts | null | undefined) => [facts?.systemVendor, facts?.systemProduct, facts?.systemSerial].filter((part) => part != null).join(' ') || null;
    scalar('system', system(was), system(now));
  }
  scalar('osRelease', before.osRelease, after.osRelease);
  scalar('kernel', before.kernel, after.kernel);
  return changes;
}

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

/** What a pool promises of each of its hosts (the node template cluster-autoscaler plans with). */
export interface HardwareMinimums {
  readonly cpus: number;
  readonly memoryBytes: number;
}

/** A named check of a host against a pool's minimums, as the Assisted Installer names its host validations. */
export interface HardwareValidation {
  readonly id: 'has-min-cpu-cores' | 'has-min-memory';
  readonly found: number;
  readonly wanted: number;
  /** `has-min-memory: 3.8 GiB < 8 GiB`. */
  readonly text: string;
}

/**
 * The validations a host fails against a pool's minimums. Memory is MemTotal, what the kubelet
 * reports as the Node's capacity (a little under the RAM installed). What the host did not tell
 * (facts from before hardware was read) fails nothing.
 */
export function failedHardwareValidations(hardware: Pick<HardwareFacts, 'cpus' | 'memoryBytes'> | undefined, minimums: HardwareMinimums): HardwareValidation[] {
  const failed: HardwareValidation[] = [];
  if (hardware?.cpus != null && hardware.cpus < minimums.cpus) {
    failed.push({ id: 'has-min-cpu-cores', found: hardware.cpus, wanted: minimums.cpus, text: `has-min-cpu-cores: ${hardware.cpus} < ${minimums.cpus}` });
  }
  if (hardware?.memoryBytes != null && hardware.memoryBytes < minimums.memoryBytes) {
    failed.push({ id: 'has-min-memory', found: hardware.memoryBytes, wanted: minimums.memoryBytes, text: `has-min-memory: ${gib(hardware.memoryBytes)} < ${gib(minimums.memoryBytes)}` });
  }
  return failed;
}

function gib(bytes: number): string {
  return `${Number((bytes / 2 ** 30).toFixed(1))} GiB`;
}

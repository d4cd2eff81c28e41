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

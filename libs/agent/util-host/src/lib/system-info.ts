import { availableParallelism, hostname } from 'node:os';

/** Facts about the host that need no command. */
export interface SystemInfo {
  /** `gethostname()`, as the kubelet uses it for the Node name. */
  hostname(): string;
  /** CPUs this process may run on (`nproc`). */
  cpuCount(): number;
}

export class NodeSystemInfo implements SystemInfo {
  hostname(): string {
    return hostname();
  }

  cpuCount(): number {
    return availableParallelism();
  }
}

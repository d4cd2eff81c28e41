import type { SystemInfo } from '../lib/system-info';

export class FakeSystemInfo implements SystemInfo {
  constructor(
    public name = 'h1',
    public cpus = 4,
  ) {}

  hostname(): string {
    return this.name;
  }

  cpuCount(): number {
    return this.cpus;
  }
}

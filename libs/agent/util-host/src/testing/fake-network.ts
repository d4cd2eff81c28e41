import type { Network, TcpProbe } from '../lib/network';

/** Scripted reachability: `ports['198.18.0.2:6443'] = { ok: false, ... }`; unlisted ports connect. */
export class FakeNetwork implements Network {
  readonly probes: string[] = [];

  constructor(
    readonly ports: Record<string, TcpProbe | TcpProbe[]> = {},
    readonly names: Record<string, readonly string[]> = {},
  ) {}

  async tcpConnect(host: string, port: number): Promise<TcpProbe> {
    const key = `${host}:${port}`;
    this.probes.push(key);
    const scripted = this.ports[key];
    if (Array.isArray(scripted)) {
      return scripted.length > 1 ? (scripted.shift() as TcpProbe) : (scripted[0] ?? { ok: true, ms: 1 });
    }
    return scripted ?? { ok: true, ms: 1 };
  }

  async resolve(name: string): Promise<{ readonly addresses: readonly string[]; readonly code?: string }> {
    const addresses = this.names[name];
    return addresses === undefined || addresses.length === 0 ? { addresses: [], code: 'ENOTFOUND' } : { addresses };
  }
}

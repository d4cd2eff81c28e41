import type { LabLayout } from './lab-layout';
import { runCommand } from './run-command';

/**
 * Latency, loss and bandwidth limits on a host's link with `tc`. Latency and
 * loss need the netem qdisc (CONFIG_NET_SCH_NETEM); kernels without it get a
 * clear {@link NetemUnavailableError}. Bandwidth limits use htb.
 */
export class NetemUnavailableError extends Error {
  constructor(detail: string) {
    super(
      `tc netem is not available in this kernel (${detail.trim()}): latency and loss cannot be injected here. ` +
      'Link cut/restore and bandwidth limits (htb) still work.',
    );
    this.name = 'NetemUnavailableError';
  }
}

/** Latency and loss to add to a host's link (both directions get the loss; the delay is split between them). */
export interface Impairment {
  readonly delayMs: number;
  readonly jitterMs?: number;
  readonly lossPercent?: number;
}

/** Whether this kernel has netem (probed on the lab's bridge, left unchanged). */
export async function netemAvailable(layout: LabLayout): Promise<boolean> {
  const added = await runCommand(['tc', 'qdisc', 'add', 'dev', layout.bridge, 'root', 'netem', 'delay', '0ms'], { allowFailure: true });
  if (added.code !== 0) {
    return false;
  }
  await runCommand(['tc', 'qdisc', 'del', 'dev', layout.bridge, 'root'], { allowFailure: true });
  return true;
}

/** Adds latency/loss to a host's link (replacing earlier traffic control). */
export async function impairLink(layout: LabLayout, id: string, impairment: Impairment): Promise<void> {
  const half = impairment.delayMs / 2;
  const netem = (delay: number) => [
    'netem', 'delay', `${delay}ms`,
    ...(impairment.jitterMs ? [`${impairment.jitterMs / 2}ms`] : []),
    ...(impairment.lossPercent ? ['loss', `${impairment.lossPercent}%`] : []),
  ];
  for (const [prefix, dev] of linkEnds(layout, id)) {
    const result = await runCommand([...prefix, 'qdisc', 'replace', 'dev', dev, 'root', ...netem(half)], { allowFailure: true });
    if (result.code !== 0) {
      if (/unknown|not found|No such file/i.test(result.stderr)) {
        throw new NetemUnavailableError(result.stderr);
      }
      throw new Error(`tc netem on ${dev} failed: ${result.stderr.trim()}`);
    }
  }
}

/** Limits a host's bandwidth in both directions (`rate` in tc units, e.g. `1mbit`). */
export async function limitBandwidth(layout: LabLayout, id: string, rate: string): Promise<void> {
  for (const [prefix, dev] of linkEnds(layout, id)) {
    await runCommand([...prefix, 'qdisc', 'replace', 'dev', dev, 'root', 'handle', '1:', 'htb', 'default', '10']);
    await runCommand([...prefix, 'class', 'replace', 'dev', dev, 'parent', '1:', 'classid', '1:10', 'htb', 'rate', rate, 'ceil', rate]);
  }
}

/** Removes latency, loss and bandwidth limits from a host's link. */
export async function clearTrafficControl(layout: LabLayout, id: string): Promise<void> {
  for (const [prefix, dev] of linkEnds(layout, id)) {
    await runCommand([...prefix, 'qdisc', 'del', 'dev', dev, 'root'], { allowFailure: true });
  }
}

/** `tc` for the machine side (towards the host) and the host side (towards the machine) of the link. */
function linkEnds(layout: LabLayout, id: string): [string[], string][] {
  return [
    [['tc'], layout.vethName(id)],
    [['tc', '-n', layout.netnsName(id)], 'eth0'],
  ];
}

import type { LabLayout } from './lab-layout';
import { runCommand } from './run-command';

/** One host's place on the lab network. */
export interface HostLink {
  readonly id: string;
  readonly ip: string;
}

/**
 * Creates the lab's bridge with the gateway address (and with it the route
 * to the lab's slice only) and the VIP. IPv6 stays off on the lab links so
 * the hosts send nothing but what the tests cause.
 */
export async function createBridge(layout: LabLayout): Promise<void> {
  const { bridge, network } = layout;
  await runBatch(null, [
    `link add ${bridge} type bridge`,
    `link set ${bridge} addrgenmode none`,
    `addr add ${network.gateway}/${network.prefixLength} dev ${bridge}`,
    `addr add ${network.vip}/32 dev ${bridge}`,
    `link set ${bridge} up`,
  ]);
}

/**
 * Creates the hosts' network namespaces and veth pairs: `eth0` inside with
 * the host's address and a default route via the gateway, the other end
 * enslaved to the bridge. Two `ip -batch` runs on the machine plus one per
 * host keep this fast for many hosts.
 */
export async function createHostLinks(layout: LabLayout, hosts: readonly HostLink[]): Promise<void> {
  const { bridge, network, netnsName, vethName } = layout;
  await runBatch(null, hosts.flatMap(({ id }) => [
    `netns add ${netnsName(id)}`,
    `link add ${vethName(id)} type veth peer name eth0 netns ${netnsName(id)}`,
    `link set ${vethName(id)} addrgenmode none`,
    `link set ${vethName(id)} master ${bridge}`,
    `link set ${vethName(id)} up`,
  ]));
  await Promise.all(hosts.map(({ id, ip }) => runBatch(netnsName(id), [
    'link set lo up',
    'link set eth0 addrgenmode none',
    `addr add ${ip}/${network.prefixLength} dev eth0`,
    'link set eth0 up',
    `route add default via ${network.gateway}`,
  ])));
}

/**
 * Cuts (or restores) a host's link at the machine-side end. While cut, the
 * host's address stays in the bridge's neighbour table, so packets are
 * silently lost and connections time out as with a pulled cable, instead
 * of failing fast with "no route to host" once ARP gives up.
 */
export async function setHostLink(layout: LabLayout, id: string, ip: string, up: boolean): Promise<void> {
  const { bridge, netnsName, vethName } = layout;
  if (up) {
    await runCommand(['ip', 'link', 'set', vethName(id), 'up']);
    await runCommand(['ip', 'neigh', 'del', ip, 'dev', bridge], { allowFailure: true });
    return;
  }
  const { stdout } = await runCommand(['ip', '-n', netnsName(id), '-o', 'link', 'show', 'eth0']);
  const mac = /link\/ether ([0-9a-f:]{17})/.exec(stdout)?.[1];
  if (mac === undefined) {
    throw new Error(`cannot read the MAC address of ${id}'s eth0`);
  }
  await runCommand(['ip', 'neigh', 'replace', ip, 'lladdr', mac, 'dev', bridge, 'nud', 'permanent']);
  await runCommand(['ip', 'link', 'set', vethName(id), 'down']);
}

async function runBatch(netns: string | null, lines: readonly string[]): Promise<void> {
  if (lines.length === 0) {
    return;
  }
  const namespaceArgs = netns === null ? [] : ['-n', netns];
  // `ip -batch -` reads the commands from stdin; a failing line stops the batch.
  await runCommand(['ip', ...namespaceArgs, '-batch', '-'], { input: `${lines.join('\n')}\n` });
}


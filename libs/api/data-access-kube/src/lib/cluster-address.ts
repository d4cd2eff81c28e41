import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { type CodedText, bare, message } from '@ccos/shared/messages';

/**
 * Address ranges the service does not send cluster credentials to unless told to: its own host
 * (loopback, and the unspecified address, which reaches it too), link-local networks, and the
 * cloud metadata endpoints, where a credential or a request would land with whoever runs the host.
 */
export type RefusedAddressRange = 'loopback' | 'link-local' | 'metadata';

const RANGES: Readonly<Record<RefusedAddressRange, ReadonlyArray<readonly [string, number, 'ipv4' | 'ipv6']>>> = {
  loopback: [
    ['127.0.0.0', 8, 'ipv4'],
    ['0.0.0.0', 8, 'ipv4'],
    ['::1', 128, 'ipv6'],
    ['::', 128, 'ipv6'],
  ],
  'link-local': [
    ['169.254.0.0', 16, 'ipv4'],
    ['fe80::', 10, 'ipv6'],
  ],
  // AWS/GCP/Azure/OpenStack/DigitalOcean (169.254.169.254, also link-local), AWS over IPv6,
  // Alibaba Cloud, Azure's WireServer, Oracle Cloud's legacy endpoint.
  metadata: [
    ['169.254.169.254', 32, 'ipv4'],
    ['fd00:ec2::254', 128, 'ipv6'],
    ['100.100.100.200', 32, 'ipv4'],
    ['168.63.129.16', 32, 'ipv4'],
    ['192.0.0.192', 32, 'ipv4'],
  ],
};

const RANGE_NAMES = Object.keys(RANGES) as RefusedAddressRange[];

/** Checked first: a metadata address is refused as such even where link-local ones are allowed. */
const CHECK_ORDER: readonly RefusedAddressRange[] = ['metadata', 'loopback', 'link-local'];

function blockListOf(entries: ReadonlyArray<readonly [string, number, 'ipv4' | 'ipv6']>): BlockList {
  const list = new BlockList();
  for (const [network, prefix, family] of entries) {
    list.addSubnet(network, prefix, family);
  }
  return list;
}

const RANGE_LISTS = new Map(RANGE_NAMES.map((name) => [name, blockListOf(RANGES[name])]));

function familyOf(address: string): 'ipv4' | 'ipv6' {
  return isIP(address) === 6 ? 'ipv6' : 'ipv4';
}

const UNSPECIFIED = blockListOf([['0.0.0.0', 8, 'ipv4'], ['::', 128, 'ipv6']]);

/**
 * What a refused address is, finer than its range: the unspecified address (0.0.0.0, ::) is allowed
 * and refused with `loopback`, as it reaches the service's own host, but named as what it is.
 */
export type RefusedAddressClass = RefusedAddressRange | 'unspecified';

/** What the service would connect to: a cluster's API server, or a host over SSH. Each refusal says which. */
export type AddressPurpose = 'cluster' | 'ssh' | 'webhook';

/** The refused range an IP address falls in (IPv4-mapped IPv6 addresses count as their IPv4 address), or null. */
export function refusedRangeOf(address: string): RefusedAddressRange | null {
  const family = familyOf(address);
  return CHECK_ORDER.find((name) => RANGE_LISTS.get(name)?.check(address, family)) ?? null;
}

/** Which refused ranges the service may connect to anyway (`ALLOW_CLUSTER_ADDRESSES`). */
export interface ClusterAddressPolicy {
  /** Whole ranges allowed by name. */
  readonly ranges: readonly RefusedAddressRange[];
  /** Networks allowed even where they fall in a refused range, as written (`127.0.0.1/32`, `fd00::/8`). */
  readonly networks: readonly string[];
}

/** The safe default: nothing of the refused ranges. */
export const STRICT_ADDRESS_POLICY: ClusterAddressPolicy = { ranges: [], networks: [] };

/** The variable {@link parseAddressPolicy} reads; named in every refusal so the operator knows what to set. */
export const ADDRESS_POLICY_VARIABLE = 'ALLOW_CLUSTER_ADDRESSES';

/**
 * Parses `ALLOW_CLUSTER_ADDRESSES`: a comma-separated list of range names (`loopback`,
 * `link-local`, `metadata`) and networks in CIDR notation. Empty means {@link STRICT_ADDRESS_POLICY}.
 * Throws an Error naming the first entry it cannot read.
 */
export function parseAddressPolicy(raw: string | undefined): ClusterAddressPolicy {
  const ranges = new Set<RefusedAddressRange>();
  const networks: string[] = [];
  for (const entry of (raw ?? '').split(',').map((part) => part.trim()).filter(Boolean)) {
    if ((RANGE_NAMES as string[]).includes(entry)) {
      ranges.add(entry as RefusedAddressRange);
      continue;
    }
    const [network, prefixText, extra] = entry.split('/');
    const family = isIP(network ?? '');
    const prefix = Number(prefixText);
    if (extra !== undefined || family === 0 || !/^\d{1,3}$/.test(prefixText ?? '') || prefix > (family === 4 ? 32 : 128)) {
      throw new Error(`${ADDRESS_POLICY_VARIABLE}: "${entry}" is neither ${RANGE_NAMES.join(', ')} nor a network such as 127.0.0.1/32 or fd00::/8`);
    }
    networks.push(entry);
  }
  return { ranges: [...ranges], networks };
}

/** The verdict on one address; a refusal says why (`127.0.0.1 is a loopback address …`). */
export type AddressVerdict =
  | { readonly ok: true }
  | { readonly ok: false; readonly range: RefusedAddressRange; readonly addressClass: RefusedAddressClass; readonly reason: string; readonly reasonCoded: CodedText };

/** Each class of refused SSH target by its own code, so clients tell them apart. */
const SSH_REFUSALS = {
  loopback: 'ssh.addressRefused.loopback',
  unspecified: 'ssh.addressRefused.unspecified',
  'link-local': 'ssh.addressRefused.link-local',
  metadata: 'ssh.addressRefused.metadata',
} as const satisfies Record<RefusedAddressClass, string>;

/** Decides whether the service may connect to an IP address under a policy. */
export class ClusterAddressGuard {
  private readonly allowed: BlockList;

  /** A guard that allows whole ranges, e.g. `allowing('loopback')` for a kube-sim on 127.0.0.1 in tests. */
  static allowing(...ranges: RefusedAddressRange[]): ClusterAddressGuard {
    return new ClusterAddressGuard({ ranges, networks: [] });
  }

  constructor(readonly policy: ClusterAddressPolicy = STRICT_ADDRESS_POLICY) {
    this.allowed = new BlockList();
    for (const network of policy.networks) {
      const [address, prefix] = network.split('/');
      this.allowed.addSubnet(address ?? '', Number(prefix), familyOf(address ?? ''));
    }
  }

  /** `purpose` words the refusal: cluster credentials are not sent there, or no SSH connection is made. */
  check(address: string, purpose: AddressPurpose = 'cluster'): AddressVerdict {
    const range = refusedRangeOf(address);
    if (range === null || this.policy.ranges.includes(range) || this.allowed.check(address, familyOf(address))) {
      return { ok: true };
    }
    const addressClass: RefusedAddressClass = range === 'loopback' && UNSPECIFIED.check(address, familyOf(address)) ? 'unspecified' : range;
    const reason = purpose === 'ssh'
      ? message(SSH_REFUSALS[addressClass], { address, range, variable: ADDRESS_POLICY_VARIABLE })
      : message(purpose === 'webhook' ? 'webhook.addressRefused' : 'cluster.addressRefused', { address, range, variable: ADDRESS_POLICY_VARIABLE });
    return { ok: false, range, addressClass, reason: reason.message, reasonCoded: reason };
  }

  /**
   * A DNS lookup for HTTP agents that drops refused addresses, so a name that changes its
   * answer after registration (DNS rebinding) cannot steer a connection to one. Every
   * connection resolves again, so every connection is checked.
   */
  lookup(onRefused: (refusal: ClusterAddressRefusedError) => void = () => undefined): LookupFunction {
    return (hostname, options, callback) => {
      dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
        if (error) {
          callback(error, '', 0);
          return;
        }
        const permitted = addresses.filter((entry) => this.check(entry.address).ok);
        if (permitted.length === 0) {
          const first = addresses[0];
          const verdict = first ? this.check(first.address) : null;
          const refusal = new ClusterAddressRefusedError(hostname, verdict && !verdict.ok ? verdict.reason : 'no address');
          onRefused(refusal);
          callback(refusal, '', 0);
          return;
        }
        if (options.all) {
          (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, permitted);
        } else {
          callback(null, permitted[0]?.address ?? '', permitted[0]?.family ?? 4);
        }
      });
    };
  }
}

/** A connection was not made because the API server's name resolved only to refused addresses. */
export class ClusterAddressRefusedError extends Error {
  override readonly name = 'ClusterAddressRefusedError';
  readonly code = 'ECLUSTERADDRESS';

  constructor(
    readonly host: string,
    readonly reason: string,
  ) {
    super(`${host} resolves to ${reason}`);
  }
}

/** The host of a URL as it will be connected to: IPv6 without brackets, IPv4 in dotted form (`https://0x7f000001` is 127.0.0.1). */
export function hostOf(url: string): string {
  const hostname = new URL(url).hostname;
  return hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
}

/** What {@link resolveClusterHost} answers: the host's addresses, or why it may not be used. */
export type HostCheck =
  | { readonly ok: true; readonly addresses: readonly string[] }
  | { readonly ok: false; readonly kind: 'refused' | 'unresolvable' | 'dns-unavailable'; readonly message: string; readonly coded: CodedText };

/**
 * Resolves the host of an API server URL (an IP address stands for itself) and checks every
 * address it has now against the guard: one refused address refuses the host.
 */
export async function resolveClusterHost(url: string, guard: ClusterAddressGuard, lookup: typeof dnsLookup = dnsLookup, purpose: AddressPurpose = 'cluster'): Promise<HostCheck> {
  const host = hostOf(url);
  let addresses: string[];
  if (isIP(host) !== 0) {
    addresses = [host];
  } else {
    try {
      addresses = await new Promise<string[]>((resolve, reject) =>
        lookup(host, { all: true }, (error, found: LookupAddress[]) => (error ? reject(error) : resolve(found.map((entry) => entry.address)))),
      );
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'error';
      const unresolvable = code === 'ENOTFOUND' || code === 'ENODATA';
      const coded = message(unresolvable ? 'cluster.hostUnresolvable' : 'cluster.dnsUnavailable', { host, code });
      return { ok: false, kind: unresolvable ? 'unresolvable' : 'dns-unavailable', message: coded.message, coded };
    }
  }
  for (const address of addresses) {
    const verdict = guard.check(address, purpose);
    if (!verdict.ok) {
      const coded = address === host ? verdict.reasonCoded : message('cluster.hostResolvesTo', { host, refusal: bare(verdict.reasonCoded) });
      return { ok: false, kind: 'refused', message: coded.message, coded };
    }
  }
  return { ok: true, addresses };
}

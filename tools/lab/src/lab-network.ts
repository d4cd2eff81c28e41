/**
 * Addresses of the labs on a machine. Every lab has its own slice of the
 * test range 198.18.0.0/24 (RFC 2544 benchmarking space, never routed), its
 * own bridge holding the slice's first address as the gateway and the
 * second as the VIP, and its hosts after them. Slices are aligned blocks of
 * 32, 64 or 128 addresses, so each lab's route is more specific than any
 * other's and nothing of one lab answers on another's network.
 *
 * The first block (198.18.0.0/27) is left alone: labs of earlier versions of
 * this code (one bridge with 198.18.0.1/24, the VIP 198.18.0.2, hosts from
 * 198.18.0.11) may still run from another checkout, and a lab there would
 * take their hosts' addresses.
 */
export const LAB_RANGE = '198.18.0.0/24';
const RANGE_PREFIX = '198.18.0.';
const RANGE_SIZE = 256;
/** Offsets below this belong to labs of earlier versions (see above). */
const FIRST_OFFSET = 32;
/** Block sizes a lab can get, smallest first. */
const BLOCK_SIZES = [32, 64, 128] as const;
/** Network address, gateway, VIP and broadcast address of each block. */
const RESERVED_PER_BLOCK = 4;

/** The most hosts one lab can have. */
export const MAX_HOSTS = Math.max(...BLOCK_SIZES) - RESERVED_PER_BLOCK;

/** One lab's slice of the test range. */
export interface LabNetwork {
  /** CIDR, e.g. `198.18.0.64/27`. */
  readonly subnet: string;
  readonly prefixLength: number;
  /** The machine as the lab's hosts see it (first address of the slice). */
  readonly gateway: string;
  /** The lab's cluster VIP (second address): machine config server and API forward. */
  readonly vip: string;
  /** How many hosts fit. */
  readonly capacity: number;
  /** The address of host number `n` (1-based). */
  hostIp(n: number): string;
}

/** The network of a slice given as CIDR (as recorded in the registry). */
export function labNetwork(subnet: string): LabNetwork {
  const { offset, size } = parseSubnet(subnet);
  const capacity = size - RESERVED_PER_BLOCK;
  return {
    subnet,
    prefixLength: 32 - Math.log2(size),
    gateway: address(offset + 1),
    vip: address(offset + 2),
    capacity,
    hostIp(n: number): string {
      if (!Number.isInteger(n) || n < 1 || n > capacity) {
        throw new RangeError(`host number ${n} is outside 1..${capacity} of ${subnet}`);
      }
      return address(offset + 2 + n);
    },
  };
}

/**
 * A free block big enough for `hosts` hosts, or null when every block that
 * size overlaps one of `taken` (CIDRs of the labs already there). Of the free
 * blocks, the one whose addresses were released longest ago (`released`: CIDR
 * → when its lab ended, ms), never-used ones first, in address order: a
 * slice goes back into use only after every other free slice did, so a
 * service or agent left over from an ended lab is least likely to meet a new
 * lab's host on an address it still knows.
 */
export function allocateSubnet(hosts: number, taken: readonly string[], released: ReadonlyMap<string, number> = new Map()): LabNetwork | null {
  if (!Number.isInteger(hosts) || hosts < 1 || hosts > MAX_HOSTS) {
    throw new RangeError(`hosts must be 1..${MAX_HOSTS}, got ${hosts}`);
  }
  const size = BLOCK_SIZES.find((candidate) => candidate - RESERVED_PER_BLOCK >= hosts) ?? BLOCK_SIZES[BLOCK_SIZES.length - 1];
  const overlaps = (block: { offset: number; size: number }, offset: number) => offset < block.offset + block.size && block.offset < offset + size;
  const used = taken.map(parseSubnet);
  const releases = [...released].flatMap(([subnet, at]) => {
    try {
      return [{ ...parseSubnet(subnet), at }];
    } catch {
      return [];
    }
  });
  let best: { offset: number; lastUse: number } | null = null;
  for (let offset = Math.ceil(FIRST_OFFSET / size) * size; offset + size <= RANGE_SIZE; offset += size) {
    if (used.some((block) => overlaps(block, offset))) {
      continue;
    }
    const lastUse = Math.max(-Infinity, ...releases.filter((block) => overlaps(block, offset)).map((block) => block.at));
    if (best === null || lastUse < best.lastUse) {
      best = { offset, lastUse };
    }
  }
  return best === null ? null : labNetwork(`${address(best.offset)}/${32 - Math.log2(size)}`);
}

/** Whether `ip` lies inside `subnet`. */
export function subnetContains(subnet: string, ip: string): boolean {
  if (!ip.startsWith(RANGE_PREFIX)) {
    return false;
  }
  const octet = Number(ip.slice(RANGE_PREFIX.length));
  const { offset, size } = parseSubnet(subnet);
  return Number.isInteger(octet) && octet >= offset && octet < offset + size;
}

function parseSubnet(subnet: string): { offset: number; size: number } {
  const match = /^198\.18\.0\.(\d{1,3})\/(\d{1,2})$/.exec(subnet);
  const offset = Number(match?.[1]);
  const size = 2 ** (32 - Number(match?.[2]));
  if (match === null || !BLOCK_SIZES.some((candidate) => candidate === size) || offset % size !== 0 || offset + size > RANGE_SIZE) {
    throw new RangeError(`${subnet} is not a lab slice of ${LAB_RANGE}`);
  }
  return { offset, size };
}

function address(offset: number): string {
  return `${RANGE_PREFIX}${offset}`;
}

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { hostDirs } from './host-mounts';
import { reinstallHost, type LabHost } from './lab-host';
import type { LabLayout } from './lab-layout';
import type { MachineConfigServerMode } from './machine-config-server';
import { setHostLink } from './network';
import { generateHostKeys, hostKeyFingerprints, startSshd, stopSshd, type HostKeyType } from './sshd';
import { STANDIN_FILES, readJson, type HostFaults } from './standins/host-state';
import { clearTrafficControl, impairLink, limitBandwidth, type Impairment } from './traffic-control';
import { readVipFaults, writeVipFaults, type VipFaults } from './vip-services';

/**
 * Fault injection for tests and the CLI. Host faults act on the machine side
 * (link, traffic control, sshd) or flip switches the host's stand-ins read
 * (swap, clock); VIP faults go through a file the VIP services watch, so they
 * work the same for the CLI's daemon and for in-process services.
 */
export interface LabFaults {
  /** Takes the host's link down (machine side): SSH to it times out. */
  cutLink(host: string): Promise<void>;
  /** Brings the host's link back. */
  restoreLink(host: string): Promise<void>;
  /** Adds latency and loss (tc netem); throws NetemUnavailableError where the kernel lacks netem. */
  addLatency(host: string, impairment: Impairment): Promise<void>;
  /** Limits the host's bandwidth (tc htb), e.g. `1mbit`, to make downloads slow. */
  limitBandwidth(host: string, rate: string): Promise<void>;
  /** Removes latency, loss and bandwidth limits. */
  clearTrafficControl(host: string): Promise<void>;
  /** Stops the host's sshd listener: new connections are refused, open sessions go on. */
  stopSshd(host: string): Promise<void>;
  /** Starts the host's sshd again. */
  startSshd(host: string): Promise<void>;
  /** Replaces the host's host keys and restarts sshd; returns the new fingerprints. */
  rekey(host: string): Promise<Partial<Record<HostKeyType, string>>>;
  /**
   * A fresh OS install of the host (same address, root password and authorized keys; a new
   * machine-id and new host keys; nothing of what it gained since): returns both.
   */
  reinstall(host: string): Promise<{ machineId: string; fingerprints: Partial<Record<HostKeyType, string>> }>;
  /** Makes `swapon --show` list a swap partition (or not). */
  setSwap(host: string, on: boolean): Promise<void>;
  /** Makes `timedatectl` report the clock as (not) synchronised. */
  setTimeSynchronised(host: string, synchronised: boolean): Promise<void>;
  /**
   * Moves the host's clock `seconds` ahead (cumulative), as the stand-in kubelet sees it: the
   * certificates it holds age by that much at once, so rotation comes due without waiting.
   */
  advanceClock(host: string, seconds: number): Promise<void>;
  /** Makes the machine config server answer normally or with an HTML error page. */
  setMachineConfigServer(mode: MachineConfigServerMode): Promise<void>;
  /** Closes (refuses) or reopens a VIP port (6443 or 22623). */
  setVipPort(port: number, open: boolean): Promise<void>;
}

/** Finds a host by id (`h1`), hostname or IP. */
export function findHost(hosts: readonly LabHost[], ref: string): LabHost {
  const host = hosts.find((candidate) => candidate.id === ref || candidate.hostname === ref || candidate.ip === ref);
  if (host === undefined) {
    throw new RangeError(`no lab host ${ref} (hosts: ${hosts.map((h) => h.id).join(', ')})`);
  }
  return host;
}

/** Fault helpers for a lab's hosts. `afterVipChange` lets in-process services apply a VIP fault at once. */
export function labFaults(
  layout: LabLayout,
  hosts: readonly LabHost[],
  hostKeyTypes: readonly HostKeyType[],
  afterVipChange: () => Promise<void> = async () => undefined,
): LabFaults {
  const dirsOf = (ref: string) => hostDirs(layout.paths.host(findHost(hosts, ref).id));
  const updateHostFaults = async (ref: string, change: HostFaults) => {
    const file = join(dirsOf(ref).labState, STANDIN_FILES.faults);
    await writeFile(file, `${JSON.stringify({ ...readJson<HostFaults>(file, {}), ...change })}\n`);
  };
  const updateVip = async (change: (faults: VipFaults) => VipFaults) => {
    writeVipFaults(layout.paths.vipFaults, change(readVipFaults(layout.paths.vipFaults)));
    await afterVipChange();
  };
  return {
    cutLink: (ref) => setHostLink(layout, findHost(hosts, ref).id, findHost(hosts, ref).ip, false),
    restoreLink: (ref) => setHostLink(layout, findHost(hosts, ref).id, findHost(hosts, ref).ip, true),
    addLatency: (ref, impairment) => impairLink(layout, findHost(hosts, ref).id, impairment),
    limitBandwidth: (ref, rate) => limitBandwidth(layout, findHost(hosts, ref).id, rate),
    clearTrafficControl: (ref) => clearTrafficControl(layout, findHost(hosts, ref).id),
    stopSshd: (ref) => stopSshd(dirsOf(ref).run),
    startSshd: async (ref) => {
      await startSshd(layout, findHost(hosts, ref).id, dirsOf(ref).run);
    },
    rekey: async (ref) => {
      const host = findHost(hosts, ref);
      const dirs = dirsOf(ref);
      await generateHostKeys(dirs.ssh, hostKeyTypes);
      await stopSshd(dirs.run);
      await startSshd(layout, host.id, dirs.run);
      return hostKeyFingerprints(dirs.ssh, hostKeyTypes);
    },
    reinstall: async (ref) => {
      const machineId = await reinstallHost(layout, findHost(hosts, ref), hostKeyTypes);
      return { machineId, fingerprints: await hostKeyFingerprints(dirsOf(ref).ssh, hostKeyTypes) };
    },
    setSwap: (ref, on) => updateHostFaults(ref, { swap: on }),
    setTimeSynchronised: (ref, synchronised) => updateHostFaults(ref, { timeUnsynchronised: !synchronised }),
    advanceClock: async (ref, seconds) => {
      const file = join(dirsOf(ref).labState, STANDIN_FILES.faults);
      await updateHostFaults(ref, { clockOffsetSeconds: (readJson<HostFaults>(file, {}).clockOffsetSeconds ?? 0) + seconds });
    },
    setMachineConfigServer: (mode) => updateVip((faults) => ({ ...faults, machineConfigServer: mode })),
    setVipPort: (port, open) => updateVip((faults) => {
      const closed = new Set(faults.closedPorts ?? []);
      if (open) {
        closed.delete(port);
      } else {
        closed.add(port);
      }
      return { ...faults, closedPorts: [...closed].sort() };
    }),
  };
}

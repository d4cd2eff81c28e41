import { readFileSync, statSync, writeFileSync, renameSync } from 'node:fs';
import type { Server } from 'node:https';
import { API_PORT, MACHINE_CONFIG_PORT } from './lab-layout';
import { startMachineConfigServer, type MachineConfigServerMode } from './machine-config-server';
import type { CertifiedKey } from './pki';
import { startTcpForwarder, type TcpForwarder } from './tcp-forwarder';

/**
 * What answers on the VIP: the machine config server on 22623 and the API
 * forward to kube-sim on 6443. They run in the lab daemon (CLI) or in the
 * process that called startLab. Faults are read from a file, so the CLI's
 * `fault` commands reach a daemon and tests reach in-process services the
 * same way.
 */
export interface VipServicesConfig {
  readonly vip: string;
  readonly machineConfigTls: CertifiedKey;
  /** The worker Ignition config as JSON. */
  readonly workerConfig: unknown;
  /** Where 6443 forwards to (kube-sim); no API forward without it. */
  readonly apiTarget?: { readonly host: string; readonly port: number };
  readonly faultsFile: string;
}

/** Fault switches of the VIP services. */
export interface VipFaults {
  readonly machineConfigServer?: MachineConfigServerMode;
  /** VIP ports that refuse connections (their listener is closed). */
  readonly closedPorts?: readonly number[];
}

/** Running VIP services. */
export interface VipServices {
  readonly stop: () => Promise<void>;
  /** Applies the faults file now (instead of at the next poll). */
  readonly refresh: () => Promise<void>;
}

/** Reads the VIP faults file (empty when absent). */
export function readVipFaults(file: string): VipFaults {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as VipFaults;
  } catch {
    return {};
  }
}

/** Writes the VIP faults file atomically. */
export function writeVipFaults(file: string, faults: VipFaults): void {
  writeFileSync(`${file}.tmp`, `${JSON.stringify(faults)}\n`);
  renameSync(`${file}.tmp`, file);
}

/** Starts the services and keeps them in line with the faults file. */
export async function startVipServices(config: VipServicesConfig): Promise<VipServices> {
  let faults = readVipFaults(config.faultsFile);
  let faultsStamp = stamp(config.faultsFile);
  let mcs: Server | null = null;
  let forwarder: TcpForwarder | null = null;
  let applying: Promise<void> = Promise.resolve();

  const startMcs = () => startMachineConfigServer({
    host: config.vip,
    port: MACHINE_CONFIG_PORT,
    tls: config.machineConfigTls,
    workerConfig: () => config.workerConfig,
    mode: () => faults.machineConfigServer ?? { mode: 'ok' },
  });
  const apply = async () => {
    const closed = new Set(faults.closedPorts ?? []);
    if (closed.has(MACHINE_CONFIG_PORT) && mcs !== null) {
      const server = mcs;
      mcs = null;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    } else if (!closed.has(MACHINE_CONFIG_PORT) && mcs === null) {
      mcs = await startMcs();
    }
    if (config.apiTarget !== undefined) {
      if (closed.has(API_PORT) && forwarder !== null) {
        const running = forwarder;
        forwarder = null;
        await running.close();
      } else if (!closed.has(API_PORT) && forwarder === null) {
        forwarder = await startTcpForwarder({ host: config.vip, port: API_PORT }, config.apiTarget);
      }
    }
  };
  const refresh = () => {
    faults = readVipFaults(config.faultsFile);
    faultsStamp = stamp(config.faultsFile);
    applying = applying.then(apply, apply);
    return applying;
  };
  await apply();
  const timer = setInterval(() => {
    if (stamp(config.faultsFile) !== faultsStamp) {
      void refresh();
    }
  }, 200);
  timer.unref();
  return {
    refresh,
    stop: async () => {
      clearInterval(timer);
      await applying.catch(() => undefined);
      if (mcs !== null) {
        const server = mcs;
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        mcs = null;
      }
      await forwarder?.close();
      forwarder = null;
    },
  };
}

function stamp(file: string): string {
  try {
    const info = statSync(file);
    return `${info.mtimeMs}:${info.size}:${info.ino}`;
  } catch {
    return 'absent';
  }
}

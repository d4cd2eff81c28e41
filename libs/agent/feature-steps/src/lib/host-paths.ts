/** Where the agent puts things on the host (the same on a real worker and a lab host). */
export const HOST_PATHS = {
  binDir: '/usr/local/bin',
  systemdDir: '/etc/systemd/system',
  kubeletSysconfig: '/etc/sysconfig/kubelet',
  passwd: '/etc/passwd',
  group: '/etc/group',
  meminfo: '/proc/meminfo',
  swaps: '/proc/swaps',
} as const;

/** Files the agent keeps in the run's state folder. */
export function statePaths(stateDir: string) {
  return {
    pid: `${stateDir}/agent.pid`,
    log: `${stateDir}/agent.log`,
    spool: `${stateDir}/spool.jsonl`,
    rpms: `${stateDir}/rpms`,
    units: `${stateDir}/units`,
    ignitionFetch: `${stateDir}/ignition-fetch.json`,
  } as const;
}

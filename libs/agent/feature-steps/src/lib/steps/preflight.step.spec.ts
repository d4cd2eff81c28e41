import { describe, expect, it } from 'vitest';
import { ApiError } from '@ccos/agent/data-access-api';
import { failed, ok } from '@ccos/agent/util-host/testing';
import { formatMessage, message } from '@ccos/shared/messages';
import { stepHarness, type StepHarness } from '../../testing/step-harness';
import { AGENT_RUN_PATIENCE_MS, compareVersions, kernelVersion, memTotalBytes } from './preflight-checks';
import { PreflightStep } from './preflight.step';

/** A host that passes every check. */
function healthyHost(): StepHarness {
  const h = stepHarness();
  h.exec
    .on(['uname', '-r'], ok('5.14.0-362.8.1.el9_3.x86_64\n'))
    .on(['swapon'], ok(''))
    .on(['timedatectl', 'show'], ok('yes\n'));
  h.fs.seed({ '/proc/meminfo': 'MemTotal:       16318000 kB\nMemFree:         1000 kB\n', '/proc/swaps': 'Filename\tType\tSize\tUsed\tPriority\n' });
  return h;
}

interface Case {
  readonly check: string;
  readonly setup: (h: StepHarness) => void;
  readonly observed: RegExp;
  readonly problem: RegExp;
}

const FAILURES: Case[] = [
  { check: 'kernel', setup: (h) => h.exec.on(['uname', '-r'], ok('3.10.0-1160.el7.x86_64\n')), observed: /^3\.10\.0-1160/, problem: /kernel 3\.10\.0-1160\.el7\.x86_64 is older than 4\.18/ },
  { check: 'memory', setup: (h) => h.fs.seed({ '/proc/meminfo': 'MemTotal:        3880000 kB\n' }), observed: /3973120000 bytes \(3\.7 GiB\)/, problem: /memory 3\.7 GiB is less than 8\.0 GiB/ },
  { check: 'cpus', setup: (h) => (h.system.cpus = 1), observed: /^1$/, problem: /1 CPU, fewer than 2/ },
  { check: 'swap', setup: (h) => h.exec.on(['swapon'], ok('/swapfile file 2G 0B -2\n')), observed: /swap is on: \/swapfile/, problem: /swap is on \(swapon --show lists \/swapfile\)/ },
  { check: 'timeSynchronized', setup: (h) => h.exec.on(['timedatectl', 'show'], ok('no\n')), observed: /synchronized: no/, problem: /not synchronised/ },
  { check: 'clockSkew', setup: (h) => (h.api.serverOffsetMs = -42_000), observed: /^\+42\.0 s \(host ahead of the service/, problem: /42\.0 s ahead of the installer service \(max 5 s\)/ },
  {
    check: 'apiServerReachable',
    setup: (h) => (h.net.ports['198.18.0.2:6443'] = { ok: false, ms: 3, code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 198.18.0.2:6443' }),
    observed: /ECONNREFUSED/, problem: /198\.18\.0\.2:6443 \(Kubernetes API\) is not reachable \(ECONNREFUSED/,
  },
  {
    check: 'machineConfigServerReachable',
    setup: (h) => (h.net.ports['198.18.0.2:22623'] = { ok: false, ms: 5000, code: 'ETIMEDOUT', message: 'no answer within 5 s' }),
    observed: /ETIMEDOUT: no answer within 5 s \(2 attempts\)/, problem: /198\.18\.0\.2:22623 \(machine config server\) is not reachable/,
  },
  {
    check: 'installerServiceReachable',
    setup: (h) => (h.api.health = async () => {
      throw new ApiError('transient', 'ECONNREFUSED', 'GET /healthz: connect ECONNREFUSED');
    }),
    observed: /ECONNREFUSED/, problem: /installer service is not reachable/,
  },
  {
    check: 'installerServiceReachable',
    setup: (h) => (h.api.health = async () => {
      throw new ApiError('transient', 'CERT_NOT_PINNED', "GET /healthz: the service's certificate at 198.18.0.1:4000 (sha256 fingerprint AA:BB, subject \"CN=mitm\", issuer \"CN=mitm\") is not the pinned one: its chain does not lead to the pinned CA");
    }),
    observed: /is not the pinned one/, problem: /installer service's certificate was refused \(GET \/healthz: the service's certificate at 198\.18\.0\.1:4000/,
  },
  { check: 'hostnameResolvable', setup: (h) => (h.net.names['h1'] = []), observed: /ENOTFOUND/, problem: /hostname "h1" does not resolve/ },
  { check: 'hostnameMatchesNodeName', setup: (h) => {
    h.system.name = 'localhost';
    h.net.names['localhost'] = ['127.0.0.1'];
  }, observed: /"localhost"/, problem: /hostname "localhost" is not the node name "h1"/ },
  { check: 'hostnameUnique', setup: (h) => (h.api.run = { ...h.api.run, hostnameConflict: 'Node h1 (198.18.0.99) already exists' }), observed: /already exists/, problem: /hostname is taken: Node h1/ },
  { check: 'ipUnique', setup: (h) => (h.api.run = { ...h.api.run, ipConflict: 'Node h9 has address 198.18.0.11' }), observed: /Node h9/, problem: /IP address is taken/ },
];

interface Check {
  name: string;
  passed: boolean;
  observed: string;
  expected: string;
  hint: string;
}

function checksOf(detail: unknown): Check[] {
  return (detail as { checks: Check[] }).checks;
}

describe('PREFLIGHT', () => {
  it('passes a healthy host, with one PROGRESS event per check and every check in detail.checks', async () => {
    const h = healthyHost();
    const result = await new PreflightStep().run(h.ctx);
    expect(result).toMatchObject({ ok: true, message: 'all 13 preflight checks passed' });
    const checks = checksOf(result.detail);
    expect(checks.map((check) => check.name)).toEqual([...new Set(FAILURES.map((entry) => entry.check))]);
    expect(checks.every((check) => check.passed && check.expected !== '' && check.hint !== '')).toBe(true);
    expect(h.progress).toHaveLength(13);
    expect(h.progress[3]).toMatchObject({ message: 'check 4/13 swap: passed (swap is off)', progress: 31 });
    expect(h.progress.at(-1)?.progress).toBe(100);
    expect(h.net.probes).toEqual(['198.18.0.2:6443', '198.18.0.2:22623']);
  });

  it.each(FAILURES)('fails $check with what it observed and a hint', async ({ check, setup, observed, problem }) => {
    const h = healthyHost();
    setup(h);
    const result = await new PreflightStep().run(h.ctx);
    expect(result.ok).toBe(false);
    if (result.ok) {
      return;
    }
    const checks = checksOf(result.detail);
    const failing = checks.filter((entry) => !entry.passed);
    expect(failing.map((entry) => entry.name)).toEqual([check]);
    expect(failing[0]?.observed).toMatch(observed);
    expect(result.code).toBe('PREFLIGHT_FAILED');
    expect(result.message).toMatch(/^preflight failed: /);
    expect(result.message).toMatch(problem);
    expect(result.hint).toBe(failing[0]?.hint);
    expect(result.detail?.['failed']).toEqual([check]);
  });

  it('words a conflict the service coded in the agent\'s message, in English and in Chinese', async () => {
    const h = healthyHost();
    const conflict = message('cluster.conflict.hostname', { node: 'h1', ready: true });
    h.api.run = { ...h.api.run, hostnameConflict: conflict.message, hostnameConflictCode: conflict.code, hostnameConflictParams: { ...conflict.params } };
    const result = await new PreflightStep().run(h.ctx);
    expect(result.ok).toBe(false);
    expect(result.message).toBe('preflight failed: the hostname is taken: a Node named h1 already exists in the cluster (Ready); delete it first if it is a leftover of this host');
    const coded = result.coded;
    expect(coded && formatMessage('zh-CN', coded.code, coded.params)).toContain('主机名已被占用：集群中已有名为 h1 的 Node（Ready）；如果它是此主机先前留下的，请先删除它');
  });

  it('names every failing check in one message, with all their hints', async () => {
    const h = healthyHost();
    h.exec.on(['swapon'], ok('/swapfile file 2G 0B -2\n')).on(['timedatectl', 'show'], ok('no\n'));
    h.net.ports['198.18.0.2:6443'] = { ok: false, ms: 1, code: 'EHOSTUNREACH', message: 'no route to host' };
    const result = await new PreflightStep().run(h.ctx);
    expect(result.ok).toBe(false);
    expect(result.ok ? '' : result.message).toBe(
      'preflight failed: swap is on (swapon --show lists /swapfile); the clock is not synchronised (timedatectl: System clock synchronized: no); 198.18.0.2:6443 (Kubernetes API) is not reachable (EHOSTUNREACH: no route to host)',
    );
    const hint = result.ok ? '' : result.hint;
    expect(hint).toContain('swapoff -a');
    expect(hint).toContain('timedatectl set-ntp true');
    expect(hint).toContain('nc -zv 198.18.0.2 6443');
  });

  it('reads the status page of an older timedatectl and /proc/swaps without swapon', async () => {
    const h = healthyHost();
    h.exec
      .on(['timedatectl', 'show'], failed(1, 'Unknown operation show'))
      .on(['timedatectl'], ok('      Local time: Tue\n  NTP synchronized: yes\n'))
      .on(['swapon'], { exitCode: null, error: 'ENOENT' });
    h.fs.seed({ '/proc/swaps': 'Filename\tType\tSize\tUsed\tPriority\n/dev/dm-1 partition 4194300 0 -2\n' });
    const result = await new PreflightStep().run(h.ctx);
    const checks = checksOf(result.detail);
    expect(checks.find((c) => c.name === 'timeSynchronized')?.passed).toBe(true);
    expect(checks.find((c) => c.name === 'swap')).toMatchObject({ passed: false, observed: 'swap is on: /dev/dm-1' });
  });

  it('retries a port once, so one lost SYN is not a failure', async () => {
    const h = healthyHost();
    h.net.ports['198.18.0.2:22623'] = [{ ok: false, ms: 5000, code: 'ETIMEDOUT', message: 'x' }, { ok: true, ms: 2 }];
    const result = await new PreflightStep().run(h.ctx);
    expect(result.ok).toBe(true);
  });

  it('asks the service once for skew and conflicts, and says so when it cannot for a minute', async () => {
    const h = healthyHost();
    let calls = 0;
    h.api.failAgentRun = () => {
      calls += 1;
      return new ApiError('transient', 'ECONNREFUSED', 'AgentRun: connect ECONNREFUSED');
    };
    const started = h.clock.monotonic();
    const result = await new PreflightStep().run(h.ctx);
    const failing = checksOf(result.detail).filter((c) => !c.passed).map((c) => c.name);
    expect(failing).toEqual(['clockSkew', 'hostnameUnique', 'ipUnique']);
    expect(h.clock.monotonic() - started).toBeGreaterThanOrEqual(AGENT_RUN_PATIENCE_MS);
    expect(h.clock.monotonic() - started).toBeLessThan(AGENT_RUN_PATIENCE_MS + 15_000);
    expect(calls).toBeGreaterThan(3);
  });

  it('waits out a restart of the service: the checks pass once it answers again', async () => {
    const h = healthyHost();
    const back = h.clock.monotonic() + 8_000;
    h.api.failAgentRun = () => (h.clock.monotonic() < back ? new ApiError('transient', 'ECONNREFUSED', 'AgentRun: connect ECONNREFUSED') : null);
    const result = await new PreflightStep().run(h.ctx);
    expect(result.ok).toBe(true);
  });

  it('stops asking at once when the run is stopped', async () => {
    const h = healthyHost();
    let calls = 0;
    h.api.failAgentRun = () => {
      calls += 1;
      if (calls === 2) {
        h.abort.abort();
      }
      return new ApiError('transient', 'ECONNREFUSED', 'AgentRun: connect ECONNREFUSED');
    };
    const started = h.clock.monotonic();
    await new PreflightStep().run(h.ctx).catch(() => undefined);
    expect(calls).toBe(2);
    expect(h.clock.monotonic() - started).toBeLessThan(AGENT_RUN_PATIENCE_MS);
  });

  it('does not ask again when the service refuses for good', async () => {
    const h = healthyHost();
    let calls = 0;
    h.api.failAgentRun = () => {
      calls += 1;
      return new ApiError('unauthenticated', 'UNAUTHENTICATED', 'the run token was refused');
    };
    await new PreflightStep().run(h.ctx);
    expect(calls).toBe(1);
  });
});

describe('preflight helpers', () => {
  it.each([
    ['5.14.0-362.8.1.el9_3.x86_64', [5, 14, 0]],
    ['4.18.0-477.el8.x86_64', [4, 18, 0]],
    ['6.18.44-fc-v857', [6, 18, 44]],
    ['garbage', null],
  ])('kernelVersion(%s)', (release, version) => {
    expect(kernelVersion(release)).toEqual(version);
  });

  it('compares versions numerically', () => {
    expect(compareVersions([4, 18, 0], [4, 18])).toBe(0);
    expect(compareVersions([4, 9, 0], [4, 18])).toBeLessThan(0);
    expect(compareVersions([10, 0], [4, 18])).toBeGreaterThan(0);
  });

  it('reads MemTotal', () => {
    expect(memTotalBytes('MemTotal:  1024 kB\n')).toBe(1048576);
    expect(memTotalBytes('nothing')).toBeNull();
  });
});

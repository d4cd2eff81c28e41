import { describe, expect, it } from 'vitest';
import { ApiError } from '@ccos/agent/data-access-api';
import { failed, ok } from '@ccos/agent/util-host/testing';
import { stepHarness, type StepHarness } from '../../testing/step-harness';
import { HEARTBEAT_MS, StartKubeletStep, phaseOf } from './start-kubelet.step';

const SWAP_JOURNAL = [
  'Dec 01 00:00:01 h1 kubelet[123]: I1201 00:00:01 server.go:413] "Kubelet version" kubeletVersion="v1.25.4"',
  'Dec 01 00:00:01 h1 kubelet[123]: E1201 00:00:01 run.go:74] "command failed" err="failed to run Kubelet: running with swap on is not supported, please disable swap!"',
  'Dec 01 00:00:01 h1 systemd[1]: kubelet.service: Main process exited, code=exited, status=1/FAILURE',
].join('\n');

function kubeletHost(): StepHarness {
  const h = stepHarness({ startStep: 'START_KUBELET', timeouts: { nodeReadySeconds: 600 } });
  h.exec
    .on(['systemctl', 'enable', '--now', 'kubelet'], ok(''))
    .on(['systemctl', 'is-active', 'kubelet'], ok('active\n'))
    .on(['systemctl', 'show', 'kubelet'], ok('0\n'))
    .on(['journalctl'], ok('-- No entries --\n'));
  return h;
}

/** Moves the Node along its bootstrap as the service would report it, one state per agentRun call range. */
function script(h: StepHarness, states: [number, Partial<StepHarness['api']['run']>][]): void {
  h.api.onAgentRun = (call) => {
    const current = [...states].reverse().find(([from]) => call >= from);
    if (current !== undefined) {
      h.api.run = { ...h.api.run, ...current[1] };
    }
  };
}

describe('START_KUBELET', () => {
  it('starts kubelet and reports CSR, registration and Ready as they happen', async () => {
    const h = kubeletHost();
    script(h, [
      [1, { nodeRegistered: false, pendingCsrNames: [] }],
      [3, { pendingCsrNames: ['csr-abc'] }],
      [6, { pendingCsrNames: [], nodeRegistered: true }],
      [8, { pendingCsrNames: ['csr-def'] }],
      [10, { pendingCsrNames: [], nodeReady: true }],
    ]);
    const result = await new StartKubeletStep().run(h.ctx);
    expect(result).toMatchObject({ ok: true, message: 'Node h1 is Ready' });
    expect(h.exec.callsOf('systemctl', 'enable')).toEqual([['systemctl', 'enable', '--now', 'kubelet']]);
    expect(h.progress.map((p) => p.message)).toEqual([
      'kubelet started; waiting for the Node to register',
      'waiting for CSR approval: csr-abc',
      'Node registered; waiting for Ready',
      'waiting for CSR approval: csr-def',
    ]);
    expect(h.progress.map((p) => p.progress)).toEqual([20, 30, 80, 70]);
    expect(h.clock.monotonic()).toBe(9 * 2_000);
  });

  it('records, once the Node is Ready, the kernel and the running kubelet\'s version and flags', async () => {
    const h = kubeletHost();
    h.exec
      .on(['uname', '-r'], ok('5.14.0-427.el9.x86_64\n'))
      .on(['systemctl', 'show', 'kubelet', '-p', 'MainPID'], ok('901\n'))
      .on(['/usr/local/bin/kubelet', '--version'], ok('Kubernetes v1.31.4\n'));
    h.fs.seed({ '/proc/901/cmdline': '/usr/local/bin/kubelet\0--node-ip=198.18.0.5\0' });
    script(h, [[1, { nodeRegistered: true, nodeReady: true }]]);
    const result = await new StartKubeletStep().run(h.ctx);
    expect(result.ok ? result.detail?.['running'] : null).toEqual({ kernelRelease: '5.14.0-427.el9.x86_64', kubeletVersion: 'v1.31.4', kubeletFlags: ['--node-ip=198.18.0.5'] });
  });

  it('sends a heartbeat at least every 30 s while nothing changes', async () => {
    const h = kubeletHost();
    script(h, [[1, { pendingCsrNames: ['csr-abc', 'csr-def'] }], [60, { nodeReady: true, pendingCsrNames: [] }]]);
    await new StartKubeletStep().run(h.ctx);
    const times = h.progress.map((p) => p.at);
    expect(times.length).toBeGreaterThanOrEqual(4);
    const gaps = times.slice(1).map((t, i) => t - (times[i] as number));
    expect(Math.max(...gaps)).toBeLessThanOrEqual(HEARTBEAT_MS + 2_000);
    expect(h.progress.every((p) => p.message === 'waiting for CSR approval: csr-abc, csr-def')).toBe(true);
  });

  it('fails when kubelet dies, with the journal tail and the known cause', async () => {
    const h = kubeletHost();
    h.exec.on(['systemctl', 'is-active', 'kubelet'], failed(3, '')).on(['systemctl', 'is-active', 'kubelet'], { exitCode: 3, stdout: 'failed\n' });
    h.exec.on(['journalctl'], ok(SWAP_JOURNAL));
    const result = await new StartKubeletStep().run(h.ctx);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.code).toBe('KUBELET_SWAP_ON');
      expect(result.message).toMatch(/^kubelet is not running \(systemctl is-active kubelet: failed\) — .*running with swap on is not supported/);
      expect(result.hint).toContain('swapoff -a');
      expect(result.detail).toMatchObject({ journalTail: SWAP_JOURNAL, symptom: 'KUBELET_DIED' });
    }
    expect(h.exec.callsOf('journalctl')[0]).toEqual(['journalctl', '-u', 'kubelet', '-n', '200', '--no-pager']);
  });

  it('calls a restart loop dead too (systemd shows "activating" between restarts)', async () => {
    const h = kubeletHost();
    let restarts = 0;
    h.exec
      .on(['systemctl', 'is-active', 'kubelet'], { exitCode: 3, stdout: 'activating\n' })
      .on(['systemctl', 'show', 'kubelet'], () => ok(`${restarts++}\n`))
      .on(['journalctl'], ok(SWAP_JOURNAL));
    const result = await new StartKubeletStep().run(h.ctx);
    expect(result).toMatchObject({ ok: false, code: 'KUBELET_SWAP_ON' });
    expect(result.ok ? '' : result.message).toMatch(/kubelet restarted 2 times/);
  });

  it('fails when systemctl cannot start it', async () => {
    const h = kubeletHost();
    h.exec.on(['systemctl', 'enable', '--now', 'kubelet'], failed(5, 'Failed to start kubelet.service: Unit kubelet.service not found.\n'));
    const result = await new StartKubeletStep().run(h.ctx);
    expect(result).toMatchObject({ ok: false, code: 'UNIT_REJECTED' });
    expect(result.ok ? undefined : result.command?.exitCode).toBe(5);
  });

  it('times out after nodeReadySeconds saying what it waited for', async () => {
    const h = kubeletHost();
    script(h, [[1, { pendingCsrNames: ['csr-abc'] }]]);
    const result = await new StartKubeletStep().run(h.ctx);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.code).toBe('NODE_READY_TIMEOUT');
      expect(result.message).toBe('the Node was not Ready after 600 s; waiting for CSR approval: csr-abc');
      expect(result.hint).toContain('csr-abc');
    }
    expect(h.clock.monotonic()).toBeGreaterThanOrEqual(600_000);
  });

  it('keeps waiting through a service outage and says so', async () => {
    const h = kubeletHost();
    let call = 0;
    h.api.failAgentRun = () => (call++ < 20 && call > 2 ? new ApiError('transient', 'ECONNREFUSED', 'connect ECONNREFUSED') : null);
    script(h, [[1, { pendingCsrNames: [] }], [4, { nodeRegistered: true, nodeReady: true }]]);
    const result = await new StartKubeletStep().run(h.ctx);
    expect(result.ok).toBe(true);
    expect(h.progress.some((p) => p.message.includes('installer service not answering'))).toBe(true);
  });

  it('stops when the run is cancelled', async () => {
    const h = kubeletHost();
    h.api.onAgentRun = (call) => {
      if (call === 3) {
        h.abort.abort();
      }
    };
    const result = await new StartKubeletStep().run(h.ctx);
    expect(result).toMatchObject({ ok: false, code: 'CANCELLED' });
  });
});

describe('START_KUBELET with the run\'s bootstrap identity', () => {
  const RUN_TOKEN = 'eyJhbGciOiJFUzI1NiIsImtpZCI6InJ1bi0xIn0.payload.signature';
  const UNIT = '# /etc/systemd/system/kubelet.service\n[Service]\nExecStart=/usr/local/bin/kubelet --bootstrap-kubeconfig=/etc/kubernetes/kubeconfig --kubeconfig=/var/lib/kubelet/kubeconfig\n';
  const SHARED = 'apiVersion: v1\nkind: Config\nclusters: [{name: local, cluster: {server: "https://198.18.0.2:6443", certificate-authority-data: Q0E=}}]\ncontexts: [{name: kubelet, context: {cluster: local, user: kubelet}}]\ncurrent-context: kubelet\nusers: [{name: kubelet, user: {token: abcdef.0123456789abcdef}}]\n';

  function identityHost(unit = UNIT): StepHarness {
    const h = stepHarness({ startStep: 'START_KUBELET', timeouts: { nodeReadySeconds: 600 }, kubeletBootstrapToken: RUN_TOKEN });
    h.fs.seed({ '/etc/kubernetes/kubeconfig': SHARED }, 0o600);
    h.exec
      .on(['systemctl', 'cat', 'kubelet'], ok(unit))
      .on(['systemctl', 'enable', 'kubelet'], ok(''))
      .on(['systemctl', 'restart', 'kubelet'], ok(''))
      .on(['systemctl', 'is-active', 'kubelet'], ok('active\n'))
      .on(['systemctl', 'show', 'kubelet'], ok('0\n'))
      .on(['journalctl'], ok('-- No entries --\n'));
    script(h, [[1, { nodeRegistered: true, nodeReady: true }]]);
    return h;
  }

  it('puts the run\'s token into the bootstrap kubeconfig kubelet.service names, 0600, then (re)starts kubelet', async () => {
    const h = identityHost();
    const result = await new StartKubeletStep().run(h.ctx);
    expect(result).toMatchObject({ ok: true });
    const written = h.fs.text('/etc/kubernetes/kubeconfig') ?? '';
    expect(written).toContain(RUN_TOKEN);
    expect(written).not.toContain('abcdef.0123456789abcdef');
    expect(written).toContain('server: https://198.18.0.2:6443');
    expect((h.fs.node('/etc/kubernetes/kubeconfig')?.mode ?? 0) & 0o777).toBe(0o600);
    expect(h.exec.calls.map((call) => call.argv.join(' ')).filter((line) => /^systemctl (cat|enable|restart)/.test(line))).toEqual([
      'systemctl cat kubelet',
      'systemctl enable kubelet',
      'systemctl restart kubelet',
    ]);
    expect(h.progress[0]?.message).toBe('kubelet bootstraps with this run\'s own identity (/etc/kubernetes/kubeconfig)');
    expect(JSON.stringify(h.progress)).not.toContain(RUN_TOKEN);
    // What the host runs now: the rewritten file's hash, never its token.
    expect(result.ok ? result.detail?.['written'] : null).toEqual({ '/etc/kubernetes/kubeconfig': await h.fs.sha256('/etc/kubernetes/kubeconfig') });
    expect(JSON.stringify(result)).not.toContain(RUN_TOKEN);
  });

  it('fails before starting kubelet when kubelet.service names no bootstrap kubeconfig', async () => {
    const h = identityHost('[Service]\nExecStart=/usr/local/bin/kubelet\n');
    const result = await new StartKubeletStep().run(h.ctx);
    expect(result).toMatchObject({ ok: false, code: 'KUBELET_BOOTSTRAP_KUBECONFIG', message: 'kubelet.service names no --bootstrap-kubeconfig, so kubelet cannot be given this run\'s bootstrap identity' });
    expect(h.exec.callsOf('systemctl', 'restart')).toEqual([]);
    expect(h.fs.text('/etc/kubernetes/kubeconfig')).toBe(SHARED);
  });

  it('fails when the bootstrap kubeconfig is missing, saying which file', async () => {
    const h = identityHost(UNIT.replace('/etc/kubernetes/kubeconfig', '/etc/kubernetes/bootstrap-kubelet.conf'));
    const result = await new StartKubeletStep().run(h.ctx);
    expect(result).toMatchObject({ ok: false, code: 'KUBELET_BOOTSTRAP_KUBECONFIG', message: 'kubelet\'s bootstrap kubeconfig /etc/kubernetes/bootstrap-kubelet.conf (named by kubelet.service) does not exist' });
    expect(h.exec.callsOf('systemctl', 'enable')).toEqual([]);
  });
});

describe('START_KUBELET in an apply run (a rollout on a joined node)', () => {
  function joinedHost(): StepHarness {
    const h = stepHarness({ purpose: 'APPLY', startStep: 'APPLY_IGNITION', steps: ['APPLY_IGNITION', 'START_KUBELET'], timeouts: { nodeReadySeconds: 600 } });
    h.exec
      .on(['systemctl', 'enable', 'kubelet'], ok(''))
      .on(['systemctl', 'restart', 'kubelet'], ok(''))
      .on(['systemctl', 'show', 'kubelet'], ok('0\n'))
      .on(['journalctl'], ok('-- No entries --\n'));
    // The Node was Ready before the restart, and the service says so at once.
    script(h, [[1, { nodeRegistered: true, nodeReady: true }]]);
    return h;
  }

  it('restarts kubelet on what the run wrote, writes no bootstrap kubeconfig, and ends once kubelet stayed up for a second look', async () => {
    const h = joinedHost();
    h.exec.on(['systemctl', 'is-active', 'kubelet'], ok('active\n'));
    const result = await new StartKubeletStep().run(h.ctx);
    expect(result).toMatchObject({ ok: true, message: 'Node h1 is Ready' });
    expect(h.exec.calls.map((call) => call.argv.join(' ')).filter((line) => /^systemctl (cat|enable|restart)/.test(line))).toEqual(['systemctl enable kubelet', 'systemctl restart kubelet']);
    expect(h.exec.callsOf('systemctl', 'is-active')).toHaveLength(2);
    expect(h.clock.monotonic()).toBe(2_000);
  });

  it('fails when the restarted kubelet dies, although the Node still shows Ready', async () => {
    const h = joinedHost();
    let looks = 0;
    h.exec.on(['systemctl', 'is-active', 'kubelet'], () => (looks++ === 0 ? ok('active\n') : { exitCode: 3, stdout: 'failed\n' }));
    const result = await new StartKubeletStep().run(h.ctx);
    expect(result).toMatchObject({ ok: false, code: 'KUBELET_DIED' });
  });
});

describe('phaseOf', () => {
  it('prefers Ready, then pending CSRs, then registration', () => {
    const base = { runId: 'r', nodeName: 'h1', serverTime: '', hostnameConflict: null, hostnameConflictCode: null, hostnameConflictParams: null, ipConflict: null, ipConflictCode: null, ipConflictParams: null, nodeRegistered: false, nodeReady: false, pendingCsrNames: [] as string[], cancelRequested: false };
    expect(phaseOf(null).message.message).toContain('waiting for the installer service');
    expect(phaseOf({ ...base, nodeReady: true, pendingCsrNames: ['x'] }).key).toBe('ready');
    expect(phaseOf({ ...base, pendingCsrNames: ['csr-b', 'csr-a'] })).toMatchObject({ key: 'csr:csr-a,csr-b', message: { message: 'waiting for CSR approval: csr-b, csr-a' } });
  });
});

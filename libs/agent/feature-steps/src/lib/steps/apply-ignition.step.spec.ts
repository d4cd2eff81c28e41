import { describe, expect, it } from 'vitest';
import { HttpError, type HttpRequest } from '@ccos/agent/util-host';
import { ok, requestHeader, type FakeHttpReply } from '@ccos/agent/util-host/testing';
import { stepHarness, type StepHarness } from '../../testing/step-harness';
import type { AgentConfig } from '../agent-config';
import { CA_PEM, workerConfig } from '../ignition/ignition-fixtures';
import { ApplyIgnitionStep } from './apply-ignition.step';

const MCS = 'https://198.18.0.2:22623/config/worker';
const FETCH_STATUS = '/opt/ccos-scaler/runs/run-1/ignition-fetch.json';
const HTML = [
  '<!DOCTYPE html>',
  '<html><head><title>503 Service Unavailable</title></head>',
  `<body><center><h1>503 Service Unavailable</h1></center>${'<!-- padding -->'.repeat(60)}`,
  '<hr><center>No server is available to handle this request.</center>',
  '</body></html>',
].join('\n');

function mcs(reply: FakeHttpReply | ((request: HttpRequest) => FakeHttpReply), config: Partial<AgentConfig> = { machineConfigCaCert: CA_PEM }): StepHarness & { seen: HttpRequest[] } {
  const h = stepHarness(config);
  const seen: HttpRequest[] = [];
  h.routes.push((request) => {
    if (!request.url.startsWith('https://198.18.0.2:22623/')) {
      return undefined;
    }
    seen.push(request);
    return typeof reply === 'function' ? reply(request) : reply;
  });
  h.exec.on(['systemctl'], ok(''));
  return Object.assign(h, { seen });
}

const ignition = (): FakeHttpReply => ({ status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(workerConfig()) });

describe('APPLY_IGNITION', () => {
  it('fetches the worker config with the Ignition Accept header and the cluster CA, applies it, and writes labels/taints', async () => {
    const h = mcs(ignition(), {
      machineConfigCaCert: CA_PEM,
      labels: [{ key: 'disk-type', value: 'ssd' }, { key: 'node-role.kubernetes.io/infra', value: '' }],
      taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }],
    });
    const result = await new ApplyIgnitionStep().run(h.ctx);
    expect(result.ok ? 'ok' : result.message).toBe('ok');
    expect(h.seen[0]?.url).toBe(MCS);
    expect(requestHeader(h.seen[0] as HttpRequest, 'accept')).toBe('application/vnd.coreos.ignition+json;version=3.2.0');
    expect(h.seen[0]?.ca).toBe(CA_PEM);
    expect(h.fs.text('/etc/kubernetes/kubelet-ca.crt')).toBe(CA_PEM);
    expect(h.fs.node('/etc/kubernetes/kubeconfig')?.mode).toBe(0o600);
    expect(h.fs.text('/etc/sysconfig/kubelet')).toContain(
      'KUBELET_EXTRA_ARGS="--node-labels=disk-type=ssd,node-role.kubernetes.io/infra= --register-with-taints=dedicated=gpu:NoSchedule"',
    );
    expect(result.ok ? result.message : '').toMatch(/^applied Ignition 3\.2\.0: 5 files \(5 changed\), 1 directory, 1 unit; not applied on an installed host: passwd\.users \(1\)$/);
    expect(result.detail).toMatchObject({ status: 200, contentType: 'application/json', caSource: 'machineConfigCaCert', ignitionVersion: '3.2.0' });
    // Every file Ignition put there, its units and kubelet's sysconfig, each with its hash as on disk.
    const written = (result.detail as { written: Record<string, string> }).written;
    expect(Object.keys(written)).toEqual(expect.arrayContaining(['/etc/kubernetes/kubelet-ca.crt', '/etc/kubernetes/kubeconfig', '/etc/sysconfig/kubelet']));
    expect(Object.keys(written).filter((path) => path.startsWith('/etc/systemd/system/')).sort()).toEqual(['/etc/systemd/system/kubelet.service', '/etc/systemd/system/kubelet.service.d/10-mco-default-env.conf']);
    expect(Object.keys(written)).toHaveLength(5 + 2 + 1);
    for (const [path, hash] of Object.entries(written)) {
      expect(await h.fs.sha256(path)).toBe(hash);
    }
    expect(JSON.parse(h.fs.text(FETCH_STATUS) ?? '{}')).toMatchObject({ url: MCS, status: 200, contentType: 'application/json' });
  });

  it('uses the system CAs without machineConfigCaCert, and says so', async () => {
    const h = mcs(ignition(), { machineConfigCaCert: null });
    const result = await new ApplyIgnitionStep().run(h.ctx);
    expect(h.seen[0]?.ca).toBeUndefined();
    expect(result.ok ? result.message : '').toContain('TLS verified with the system CAs');
    expect(h.progress[0]?.message).toContain('system CAs');
  });

  it('fails on an HTML page with status, content type and the first 512 bytes of the body', async () => {
    const h = mcs({ status: 200, headers: { 'content-type': 'text/html' }, body: HTML });
    const result = await new ApplyIgnitionStep().run(h.ctx);
    expect(result.ok).toBe(false);
    if (result.ok) {
      return;
    }
    expect(result.code).toBe('IGNITION_NOT_IGNITION');
    expect(result.detail).toMatchObject({ url: MCS, status: 200, contentType: 'text/html' });
    const head = String(result.detail?.['bodyHead']);
    expect(Buffer.byteLength(head)).toBe(512);
    expect(head).toBe(Buffer.from(HTML).subarray(0, 512).toString());
    expect(result.message).toContain('HTTP 200, Content-Type text/html');
    expect(result.message).toContain('"<!DOCTYPE html> <html><head><title>503 Service Unavailable</title>');
    expect(result.hint).toContain('load balancer');
    expect(JSON.parse(h.fs.text(FETCH_STATUS) ?? '{}')).toMatchObject({ status: 200, contentType: 'text/html', bodyHead: head });
    expect(h.fs.node('/etc/sysconfig/kubelet')).toBeUndefined();
  });

  it('reports a spec 2 worker config without the bootstrap credential it holds, in the event and the fetch status', async () => {
    const token = 'eyJhbGciOiJSUzI1NiIsImtpZCI6IiJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6b3BlbnNoaWZ0LW1hY2hpbmUtY29uZmlnLW9wZXJhdG9yOm5vZGUtYm9vdHN0cmFwcGVyIn0.c2ln';
    const kubeconfig = encodeURIComponent(`apiVersion: v1\nusers:\n- name: kubelet\n  user:\n    token: ${token}\n`);
    const spec2 = JSON.stringify({
      ignition: { version: '2.2.0' },
      storage: { files: [{ path: '/etc/kubernetes/kubeconfig', contents: { source: `data:,${kubeconfig}` } }] },
      passwd: { users: [{ name: 'core', sshAuthorizedKeys: ['ssh-ed25519 AAAAC3Nza'] }] },
    });
    const h = mcs({ status: 200, headers: { 'content-type': 'application/json' }, body: spec2 });
    const result = await new ApplyIgnitionStep().run(h.ctx);
    expect(result).toMatchObject({ ok: false, code: 'IGNITION_NOT_IGNITION' });
    const fetchStatus = h.fs.text(FETCH_STATUS) ?? '';
    for (const shown of [JSON.stringify(result), fetchStatus]) {
      expect(shown).toContain('2.2.0');
      expect(shown).toContain('[redacted]');
      expect(shown).not.toContain(token.slice(0, 24));
      expect(shown).not.toContain('apiVersion%3A');
    }
  });

  it('retries a 503 page a few times before reporting it', async () => {
    const h = mcs({ status: 503, headers: { 'content-type': 'text/html' }, body: HTML });
    const result = await new ApplyIgnitionStep().run(h.ctx);
    expect(h.seen).toHaveLength(6);
    expect(result).toMatchObject({ ok: false, code: 'IGNITION_NOT_IGNITION' });
  });

  it('recovers when the load balancer comes back', async () => {
    let calls = 0;
    const h = mcs(() => (calls++ < 2 ? { status: 502, headers: { 'content-type': 'text/html' }, body: HTML } : ignition()));
    expect((await new ApplyIgnitionStep().run(h.ctx)).ok).toBe(true);
  });

  it.each([
    [{ status: 200, headers: { 'content-type': 'application/json' }, body: '{"ignition":{"version":"2.2.0"}}' }, 'IGNITION_NOT_IGNITION', 'no ignition.version 3.x'],
    [{ status: 200, headers: { 'content-type': 'application/json' }, body: 'not json' }, 'IGNITION_NOT_IGNITION', 'not JSON'],
    [{ status: 406, headers: { 'content-type': 'text/plain' }, body: 'serves Ignition spec 3 only' }, 'MCS_NOT_ACCEPTABLE', 'HTTP 406'],
    [{ status: 404, headers: { 'content-type': 'text/plain' }, body: 'machine config pool worker not found' }, 'MCS_HTTP_ERROR', 'HTTP 404'],
  ] as [FakeHttpReply, string, string][])('fails on %j', async (reply, code, reason) => {
    const result = await new ApplyIgnitionStep().run(mcs(reply).ctx);
    expect(result).toMatchObject({ ok: false, code });
    expect(result.ok ? '' : result.message).toContain(reason);
  });

  it('fails at once on a certificate the CA does not verify', async () => {
    const h = mcs(() => {
      throw new HttpError('unable to verify the first certificate', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    });
    const result = await new ApplyIgnitionStep().run(h.ctx);
    expect(result).toMatchObject({ ok: false, code: 'MCS_TLS_VERIFY_FAILED' });
    expect(h.seen).toHaveLength(1);
  });

  it('retries a refused connection for two minutes, then names the server', async () => {
    const h = mcs(() => {
      throw new HttpError('connect ECONNREFUSED 198.18.0.2:22623', 'ECONNREFUSED');
    });
    const result = await new ApplyIgnitionStep().run(h.ctx);
    expect(result).toMatchObject({ ok: false, code: 'MCS_UNREACHABLE' });
    expect(h.seen.length).toBeGreaterThan(5);
    expect(h.clock.monotonic()).toBeGreaterThanOrEqual(120_000);
  });

  it('refuses labels kubelet would not start with, before touching the host', () => {
    const problems = new ApplyIgnitionStep().validate(stepHarness({ labels: [{ key: 'kubernetes.io/role', value: 'worker' }] }).config);
    expect(problems[0]?.message).toContain('kubernetes.io/role');
    expect(problems[0]).toMatchObject({ code: 'agent.ignition.refusedLabels', params: { labels: 'kubernetes.io/role' } });
  });
});

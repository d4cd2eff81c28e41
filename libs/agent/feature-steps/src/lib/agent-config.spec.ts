import { describe, expect, it } from 'vitest';
import { parseAgentConfig } from './agent-config';

const SERVICE_CA = '-----BEGIN CERTIFICATE-----\nMIIBservice\n-----END CERTIFICATE-----\n';
const MANIFEST_SHA256 = 'a'.repeat(64);

const valid = {
  apiUrl: 'https://198.18.0.1:4000/',
  serviceTls: { caCertificates: SERVICE_CA },
  artifactManifestSha256: MANIFEST_SHA256,
  runId: '3f1c2a8e-1b2c-4d5e-8f90-123456789abc',
  token: 'agt_0123456789abcdef',
  nodeName: 'h1',
  nodeIp: '198.18.0.11',
  vip: '198.18.0.2',
  labels: [{ key: 'disk-type', value: 'ssd' }, { key: 'topology.kubernetes.io/zone', value: 'zone-a' }],
  taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }, { key: 'maintenance', value: null, effect: 'NoExecute' }],
  startStep: 'PREFLIGHT',
  machineConfigCaCert: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n',
  stateDir: '/opt/ccos-scaler/runs/3f1c2a8e-1b2c-4d5e-8f90-123456789abc',
  requirements: { minKernel: '4.18', minMemoryBytes: 8589934592, minCpus: 2, maxClockSkewSeconds: 5 },
  timeouts: { nodeReadySeconds: 1800 },
};

describe('parseAgentConfig', () => {
  it('accepts the contract\'s config and trims the API URL', () => {
    const parsed = parseAgentConfig(valid);
    expect(parsed.ok).toBe(true);
    if (parsed.ok) {
      expect(parsed.config.apiUrl).toBe('https://198.18.0.1:4000');
      expect(parsed.config.serviceTls).toEqual({ caCertificates: SERVICE_CA });
      expect(parsed.config.artifactManifestSha256).toBe(MANIFEST_SHA256);
      expect(parsed.config.taints[1]).toEqual({ key: 'maintenance', value: null, effect: 'NoExecute' });
      expect(parsed.ignoredKeys).toEqual([]);
    }
  });

  it('takes the run\'s kubelet bootstrap token, and refuses a malformed one without echoing it', () => {
    const parsed = parseAgentConfig({ ...valid, kubeletBootstrapToken: 'eyJhbGciOiJFUzI1NiJ9.payload.signature' });
    expect(parsed).toMatchObject({ ok: true, config: { kubeletBootstrapToken: 'eyJhbGciOiJFUzI1NiJ9.payload.signature' }, ignoredKeys: [] });
    expect(parseAgentConfig(valid)).toMatchObject({ ok: true, config: { kubeletBootstrapToken: null } });
    const refused = parseAgentConfig({ ...valid, kubeletBootstrapToken: 'secret with spaces inside it' });
    expect(refused).toEqual({ ok: false, problems: ['kubeletBootstrapToken must be null or 16..8192 printable characters without spaces'] });
  });

  it('takes a node group\'s providerID for kubelet, and refuses one that could break out of the kubelet flag', () => {
    expect(parseAgentConfig({ ...valid, providerId: 'ccos://lab/8cbf2056-d849-4805-917e-35cae92de042' })).toMatchObject({ ok: true, config: { providerId: 'ccos://lab/8cbf2056-d849-4805-917e-35cae92de042' } });
    expect(parseAgentConfig(valid)).toMatchObject({ ok: true, config: { providerId: null } });
    expect(parseAgentConfig({ ...valid, providerId: 'ccos://lab/x" --v=9' })).toEqual({ ok: false, problems: [expect.stringMatching(/^providerId must be null or ccos:\/\/<cluster>\/<node id> /)] });
  });

  it('takes an apply run\'s steps, and refuses steps out of order, an apply run that would run PREFLIGHT, or one with a bootstrap token', () => {
    expect(parseAgentConfig(valid)).toMatchObject({ ok: true, config: { purpose: 'INSTALL', steps: null } });
    const apply = { ...valid, purpose: 'APPLY', startStep: 'DOWNLOAD_BINARIES', steps: ['DOWNLOAD_BINARIES', 'INSTALL_SERVICES', 'START_KUBELET'] };
    expect(parseAgentConfig(apply)).toMatchObject({ ok: true, config: { purpose: 'APPLY', steps: ['DOWNLOAD_BINARIES', 'INSTALL_SERVICES', 'START_KUBELET'] }, ignoredKeys: [] });
    expect(parseAgentConfig({ ...apply, steps: ['DOWNLOAD_BINARIES', 'INSTALL_SERVICES', 'INSTALL_PACKAGES', 'START_KUBELET'] })).toEqual({ ok: false, problems: ['steps must be in install order, each once, starting at startStep (got DOWNLOAD_BINARIES, INSTALL_SERVICES, INSTALL_PACKAGES, START_KUBELET)'] });
    expect(parseAgentConfig({ ...apply, steps: ['DOWNLOAD_BINARIES', 'rm -rf /'] })).toEqual({ ok: false, problems: ['steps must be null or a non-empty list of install steps'] });
    expect(parseAgentConfig({ ...apply, startStep: 'PREFLIGHT', steps: ['PREFLIGHT', 'START_KUBELET'] })).toEqual({ ok: false, problems: ['an APPLY run ends with START_KUBELET, never runs PREFLIGHT and has no kubeletBootstrapToken'] });
    expect(parseAgentConfig({ ...apply, kubeletBootstrapToken: 'eyJhbGciOiJFUzI1NiJ9.payload.signature' })).toMatchObject({ ok: false });
    expect(parseAgentConfig({ ...apply, steps: null })).toEqual({ ok: false, problems: ['steps must name the steps of an APPLY run'] });
    expect(parseAgentConfig({ ...valid, purpose: 'REINSTALL' })).toEqual({ ok: false, problems: ['purpose must be INSTALL or APPLY (got "REINSTALL")'] });
  });

  it('allows a null CA, no labels/taints, and keys from a newer service', () => {
    const parsed = parseAgentConfig({ ...valid, machineConfigCaCert: null, labels: [], taints: [], newField: 1 });
    expect(parsed).toMatchObject({ ok: true, ignoredKeys: ['newField'] });
  });

  it.each([
    ['a plain http service (plain HTTP allowed by its operator)', { apiUrl: 'http://198.18.0.1:4000', serviceTls: null }, null],
    ['a pinned leaf key with the name checked', { serviceTls: { publicKeySha256: ['47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='], verifyHostname: true } }, { publicKeySha256: ['47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='], verifyHostname: true }],
  ])('accepts %s', (_name, change, serviceTls) => {
    const parsed = parseAgentConfig({ ...valid, ...change });
    expect(parsed).toMatchObject({ ok: true, config: { serviceTls } });
  });

  it.each([
    [{ apiUrl: 'ftp://x' }, 'apiUrl must be an http or https URL'],
    [{ serviceTls: undefined }, 'serviceTls is required with an https apiUrl'],
    [{ apiUrl: 'http://198.18.0.1:4000' }, 'serviceTls is set but apiUrl is not https'],
    [{ serviceTls: {} }, 'serviceTls needs caCertificates or publicKeySha256'],
    [{ serviceTls: { caCertificates: 'trust me' } }, 'serviceTls.caCertificates must be PEM certificates'],
    [{ serviceTls: { publicKeySha256: ['deadbeef'] } }, 'serviceTls.publicKeySha256 must be a list of base64 sha256 digests'],
    [{ serviceTls: { caCertificates: SERVICE_CA, verifyHostname: 'yes' } }, 'serviceTls.verifyHostname must be true or false'],
    [{ artifactManifestSha256: undefined }, 'artifactManifestSha256 must be a non-empty string'],
    [{ artifactManifestSha256: 'A'.repeat(64) }, 'artifactManifestSha256 must be 64 lower-case hex digits'],
    [{ apiUrl: 'not a url' }, 'apiUrl is not a URL'],
    [{ token: '' }, 'token must be a non-empty string'],
    [{ token: 'agt_has space inside' }, 'token must be 8..4096 printable characters'],
    [{ nodeName: 'H1;reboot' }, 'nodeName'],
    [{ nodeIp: '198.18.0.311' }, 'nodeIp "198.18.0.311" is not an IPv4 or IPv6 address'],
    [{ vip: undefined }, 'vip must be a non-empty string'],
    [{ startStep: 'REBOOT' }, 'startStep "REBOOT" is not an install step'],
    [{ stateDir: 'relative/dir' }, 'stateDir "relative/dir" must be an absolute path'],
    [{ stateDir: '/opt/../etc' }, 'must be an absolute path'],
    [{ labels: [{ key: 'bad key', value: 'x' }] }, 'labels: label key "bad key" is invalid'],
    [{ labels: [{ key: 'a', value: 'x"; rm -rf /' }] }, 'labels: label value'],
    [{ taints: [{ key: 'a', value: 'b', effect: 'Sometimes' }] }, 'taint effect "Sometimes" must be one of'],
    [{ machineConfigCaCert: 'hello' }, 'machineConfigCaCert must be a PEM certificate'],
    [{ requirements: { ...valid.requirements, minKernel: 'four' } }, 'requirements.minKernel must be a version'],
    [{ requirements: { ...valid.requirements, minCpus: 'two' } }, 'requirements.minCpus must be a non-negative whole number (got "two")'],
    [{ requirements: { ...valid.requirements, maxClockSkewSeconds: 0 } }, 'requirements.maxClockSkewSeconds must be a positive number'],
    [{ timeouts: {} }, 'timeouts.nodeReadySeconds must be a positive whole number'],
  ])('refuses %j: %s', (change, message) => {
    const parsed = parseAgentConfig({ ...valid, ...change });
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.problems.join('\n')).toContain(message);
    }
  });

  it('names every problem at once', () => {
    const parsed = parseAgentConfig({ ...valid, token: 1, vip: 'x', timeouts: null });
    expect(parsed.ok ? [] : parsed.problems).toHaveLength(3);
    expect(parseAgentConfig([1])).toEqual({ ok: false, problems: ['the config must be a JSON object'] });
  });
});

import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { assertPrivatePaths, workerIgnitionConfig, type IgnitionConfig, type IgnitionFile } from './ignition';
import { requestedIgnitionVersion } from './machine-config-server';

const decode = (source: string) => {
  const [meta = '', data = ''] = source.slice('data:'.length).split(/,(.*)/s);
  return meta.endsWith(';base64') ? Buffer.from(data, 'base64').toString() : decodeURIComponent(data);
};

describe('the worker Ignition config', () => {
  const config = workerIgnitionConfig({
    vip: '198.18.0.2',
    clusterCaPem: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n',
    bootstrapToken: 'abcdef.0123456789abcdef',
    sshAuthorizedKeys: ['ssh-ed25519 AAAA lab'],
  });

  it('is spec 3.2.0 with the bootstrap kubeconfig for the API behind the VIP', () => {
    expect(config.ignition.version).toBe('3.2.0');
    const kubeconfig = config.storage.files.find((file) => file.path === '/etc/kubernetes/kubeconfig');
    const parsed = parse(decode(kubeconfig?.contents.source ?? '')) as { clusters: { cluster: { server: string } }[]; users: { user: { token: string } }[] };
    expect(parsed.clusters[0]?.cluster.server).toBe('https://198.18.0.2:6443');
    expect(parsed.users[0]?.user.token).toBe('abcdef.0123456789abcdef');
    expect(decode(config.storage.files.find((file) => file.path === '/etc/kubernetes/kubelet-ca.crt')?.contents.source ?? '')).toContain('BEGIN CERTIFICATE');
    expect(config.systemd.units.map((unit) => unit.name)).toEqual(['kubelet.service']);
  });

  it('only writes paths private to each lab host', () => {
    const bad: IgnitionConfig = { ...config, storage: { ...config.storage, files: [{ ...(config.storage.files[0] as IgnitionFile), path: '/usr/bin/evil' }] } };
    expect(() => assertPrivatePaths(bad)).toThrow(/share with the machine/);
  });

  it('reads the Ignition version from the Accept header like the MCS', () => {
    expect(requestedIgnitionVersion('application/vnd.coreos.ignition+json;version=3.2.0, */*;q=0.1')).toBe('3.2.0');
    expect(requestedIgnitionVersion('application/vnd.coreos.ignition+json; version=3.1.0')).toBe('3.1.0');
    expect(requestedIgnitionVersion('application/json')).toBeNull();
    expect(requestedIgnitionVersion(undefined)).toBeNull();
  });
});

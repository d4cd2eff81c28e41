import { describe, expect, it } from 'vitest';
import { FakeExecutor, MemoryFileSystem, failed, ok } from '@ccos/agent/util-host/testing';
import { ApplyError, applyIgnitionPlan } from './ignition-applier';
import { planIgnition } from './ignition-config';
import { base64Url, CA_PEM, KUBELET_UNIT, workerConfig } from './ignition-fixtures';

function host() {
  const fs = new MemoryFileSystem().seed({
    '/etc/passwd': 'root:x:0:0:root:/root:/bin/bash\ncore:x:1000:1000::/home/core:/bin/bash\n',
    '/etc/group': 'root:x:0:\ncore:x:1000:\n',
  });
  const exec = new FakeExecutor().on(['systemctl'], ok(''));
  return { fs, exec };
}

describe('applyIgnitionPlan', () => {
  it('writes directories, files (modes, parents) and units with drop-ins, then reloads and enables', async () => {
    const { fs, exec } = host();
    const applied = await applyIgnitionPlan(planIgnition(workerConfig()), fs, exec);
    expect(fs.node('/etc/kubernetes/manifests')).toMatchObject({ type: 'directory', mode: 0o755 });
    expect(fs.node('/etc/kubernetes/kubeconfig')).toMatchObject({ type: 'file', mode: 0o600 });
    expect(fs.text('/etc/kubernetes/kubelet-ca.crt')).toBe(CA_PEM);
    expect(fs.text('/etc/kubernetes/cloud.conf')).toBe('');
    expect(fs.text('/etc/sysctl.d/99-kubernetes.conf')).toBe('net.ipv4.ip_forward = 1\nvm.swappiness = 0\n');
    expect(fs.text('/etc/systemd/system/kubelet.service')).toBe(KUBELET_UNIT);
    expect(fs.text('/etc/systemd/system/kubelet.service.d/10-mco-default-env.conf')).toContain('ENABLE_PROFILE_UNIX_SOCKET=false');
    expect(exec.calls.map((call) => call.argv)).toEqual([['systemctl', 'daemon-reload'], ['systemctl', 'enable', 'kubelet.service']]);
    expect(applied.files.every((file) => file.changed === true)).toBe(true);
  });

  it('is idempotent: a second run changes nothing', async () => {
    const { fs, exec } = host();
    await applyIgnitionPlan(planIgnition(workerConfig()), fs, exec);
    const again = await applyIgnitionPlan(planIgnition(workerConfig()), fs, exec);
    expect(again.files.some((file) => file.changed === true)).toBe(false);
    expect(again.units[0]).toMatchObject({ changed: false });
  });

  it('appends once, even across re-runs, and keeps a file with overwrite false when it matches', async () => {
    const { fs, exec } = host();
    fs.seed({ '/etc/hosts': '127.0.0.1 localhost\n' });
    const config = { ignition: { version: '3.2.0' }, storage: { files: [
      { path: '/etc/hosts', append: [{ source: base64Url('198.18.0.2 api-int\n') }] },
      { path: '/etc/motd', contents: { source: 'data:,hi' } },
    ] } };
    await applyIgnitionPlan(planIgnition(config), fs, exec);
    await applyIgnitionPlan(planIgnition(config), fs, exec);
    expect(fs.text('/etc/hosts')).toBe('127.0.0.1 localhost\n198.18.0.2 api-int\n');
    expect(fs.text('/etc/motd')).toBe('hi');
  });

  it('refuses to replace a different file when overwrite is false', async () => {
    const { fs, exec } = host();
    fs.seed({ '/etc/motd': 'operator text' });
    const error = await applyIgnitionPlan(planIgnition({ ignition: { version: '3.2.0' }, storage: { files: [{ path: '/etc/motd', contents: { source: 'data:,hi' } }] } }), fs, exec).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApplyError);
    expect((error as Error).message).toBe('/etc/motd exists with other contents and overwrite is false');
    expect(fs.text('/etc/motd')).toBe('operator text');
  });

  it('sets ownership by name and by id, and names a user that does not exist', async () => {
    const { fs, exec } = host();
    await applyIgnitionPlan(planIgnition({ ignition: { version: '3.2.0' }, storage: {
      directories: [{ path: '/home/core/.kube', user: { name: 'core' }, group: { id: 1000 } }],
      files: [{ path: '/home/core/.kube/config', contents: { source: 'data:,x' }, user: { id: 1000 }, group: { name: 'core' } }],
    } }), fs, exec);
    expect(fs.node('/home/core/.kube')).toMatchObject({ uid: 1000, gid: 1000 });
    expect(fs.node('/home/core/.kube/config')).toMatchObject({ uid: 1000, gid: 1000 });
    const error = await applyIgnitionPlan(planIgnition({ ignition: { version: '3.2.0' }, storage: { files: [{ path: '/etc/x', contents: { source: 'data:,x' }, user: { name: 'nobody-here' } }] } }), fs, exec).catch((e: unknown) => e);
    expect((error as Error).message).toContain('user "nobody-here" does not exist');
  });

  it('creates links, masks and disables units', async () => {
    const { fs, exec } = host();
    await applyIgnitionPlan(planIgnition({ ignition: { version: '3.2.0' },
      storage: { links: [{ path: '/etc/localtime', target: '/usr/share/zoneinfo/UTC' }] },
      systemd: { units: [{ name: 'firewalld.service', mask: true }, { name: 'zincati.service', enabled: false }] },
    }), fs, exec);
    expect(await fs.readlink('/etc/localtime')).toBe('/usr/share/zoneinfo/UTC');
    expect(exec.calls.map((call) => call.argv)).toEqual([
      ['systemctl', 'daemon-reload'], ['systemctl', 'mask', 'firewalld.service'], ['systemctl', 'disable', 'zincati.service'],
    ]);
  });

  it('reports a failing systemctl with its output', async () => {
    const { fs } = host();
    const exec = new FakeExecutor().on(['systemctl'], ok('')).on(['systemctl', 'enable'], failed(1, 'Failed to enable unit: Unit file kubelet.service is masked.'));
    const error = await applyIgnitionPlan(planIgnition(workerConfig()), fs, exec).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApplyError);
    expect((error as ApplyError).command?.output).toContain('is masked');
  });
});

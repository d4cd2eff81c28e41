import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { IgnitionError, ignitionVersion, planIgnition } from './ignition-config';
import { base64Url, CA_PEM, workerConfig } from './ignition-fixtures';

describe('planIgnition', () => {
  it('decodes the worker config: base64 and percent-encoded files, defaults, units with drop-ins', () => {
    const plan = planIgnition(workerConfig());
    expect(plan.version).toBe('3.2.0');
    expect(plan.directories).toEqual([{ path: '/etc/kubernetes/manifests', mode: 0o755, overwrite: true }]);
    const ca = plan.files.find((file) => file.path === '/etc/kubernetes/kubelet-ca.crt');
    expect(ca?.contents?.toString()).toBe(CA_PEM);
    expect(plan.files.find((file) => file.path === '/etc/kubernetes/cloud.conf')?.contents?.length).toBe(0);
    expect(plan.files[0]).toMatchObject({ path: '/etc/kubernetes/kubeconfig', mode: 0o600, overwrite: true, userName: 'root' });
    expect(plan.units[0]).toMatchObject({ name: 'kubelet.service', enabled: true, mask: false, dropins: [{ name: '10-mco-default-env.conf' }] });
    expect(plan.skipped).toEqual(['passwd.users (1)']);
  });

  it('applies Ignition defaults (file 0644, no overwrite) and decodes gzip with a verified hash', () => {
    const raw = gzipSync(Buffer.from('compressed contents'));
    const source = `data:;base64,${raw.toString('base64')}`;
    const hash = `sha512-${createHash('sha512').update(raw).digest('hex')}`;
    const plan = planIgnition({ ignition: { version: '3.1.0' }, storage: { files: [{ path: '/etc/x.conf', contents: { source, compression: 'gzip', verification: { hash } }, append: [{ source: base64Url('+more') }] }] } });
    expect(plan.files[0]).toMatchObject({ path: '/etc/x.conf', mode: 0o644, overwrite: false });
    expect(plan.files[0]?.contents?.toString()).toBe('compressed contents');
    expect(plan.files[0]?.append.map(String)).toEqual(['+more']);
  });

  it.each([
    [{ ignition: { version: '2.2.0' } }, 'IGNITION_NOT_IGNITION', 'no ignition.version 3.x'],
    [{ hello: 'world' }, 'IGNITION_NOT_IGNITION', 'no ignition.version 3.x'],
    [{ ignition: { version: '3.2.0', config: { merge: [{ source: 'https://api-int:22623/config/worker' }] } } }, 'IGNITION_UNSUPPORTED', 'pointer config'],
    [{ ignition: { version: '3.2.0' }, storage: { files: [{ path: 'etc/relative', contents: { source: 'data:,' } }] } }, 'IGNITION_UNSUPPORTED', 'not an absolute, normalised path'],
    [{ ignition: { version: '3.2.0' }, storage: { files: [{ path: '/etc/../root/.ssh/x', contents: { source: 'data:,' } }] } }, 'IGNITION_UNSUPPORTED', 'normalised'],
    [{ ignition: { version: '3.2.0' }, storage: { files: [{ path: '/etc/x', contents: { source: 'https://example.com/x' } }] } }, 'IGNITION_UNSUPPORTED', 'https: scheme'],
    [{ ignition: { version: '3.2.0' }, storage: { files: [{ path: '/etc/x', contents: { source: 'data:,abc', verification: { hash: 'sha512-00' } } }] } }, 'IGNITION_UNSUPPORTED', 'the config says 00'],
    [{ ignition: { version: '3.2.0' }, storage: { files: [{ path: '/etc/x', overwrite: true }] } }, 'IGNITION_UNSUPPORTED', 'overwrite needs contents.source'],
    [{ ignition: { version: '3.2.0' }, systemd: { units: [{ name: '../evil.service' }] } }, 'IGNITION_UNSUPPORTED', 'not a systemd unit name'],
    [{ ignition: { version: '3.2.0' }, systemd: { units: [{ name: 'a.service', dropins: [{ name: '../x.conf', contents: '' }] }] } }, 'IGNITION_UNSUPPORTED', 'drop-in file name'],
  ])('refuses %j (%s)', (config, code, message) => {
    let error: unknown;
    try {
      planIgnition(config);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(IgnitionError);
    expect(error).toMatchObject({ code });
    expect((error as Error).message).toContain(message);
  });

  it('recognises spec 3 versions only', () => {
    expect(ignitionVersion({ ignition: { version: '3.4.0' } })).toBe('3.4.0');
    expect(ignitionVersion({ ignition: { version: '3.5.0-experimental' } })).toBe('3.5.0-experimental');
    expect(ignitionVersion({ ignition: { version: 3.2 } })).toBeNull();
    expect(ignitionVersion('<html>')).toBeNull();
  });
});

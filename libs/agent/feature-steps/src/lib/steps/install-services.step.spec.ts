import { describe, expect, it } from 'vitest';
import { failed, ok } from '@ccos/agent/util-host/testing';
import { stepHarness, type StepHarness } from '../../testing/step-harness';
import { InstallServicesStep } from './install-services.step';

const KUBELET = '[Unit]\nDescription=Kubernetes Kubelet\n[Service]\nExecStart=/usr/local/bin/kubelet\n[Install]\nWantedBy=multi-user.target\n';
const INIT = '[Unit]\nDescription=CCOS node preparation\n[Service]\nType=oneshot\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n';

function withUnits(): StepHarness {
  const h = stepHarness();
  h.server.add('unit', 'ccos-node-init.service', Buffer.from(INIT)).add('unit', 'kubelet.service', Buffer.from(KUBELET));
  h.exec.on(['systemctl'], ok(''));
  return h;
}

describe('INSTALL_SERVICES', () => {
  it('installs the units, reloads systemd and enables them (without starting)', async () => {
    const h = withUnits();
    const result = await new InstallServicesStep().run(h.ctx);
    expect(result).toMatchObject({ ok: true, message: 'installed and enabled ccos-node-init.service, kubelet.service' });
    expect(h.fs.text('/etc/systemd/system/kubelet.service')).toBe(KUBELET);
    expect(h.fs.node('/etc/systemd/system/kubelet.service')?.mode).toBe(0o644);
    const written = (result.detail as { written: Record<string, string> }).written;
    expect(Object.keys(written)).toEqual(['/etc/systemd/system/ccos-node-init.service', '/etc/systemd/system/kubelet.service']);
    for (const [path, hash] of Object.entries(written)) {
      expect(await h.fs.sha256(path)).toBe(hash);
    }
    expect(h.exec.calls.map((call) => call.argv)).toEqual([
      ['systemctl', 'daemon-reload'],
      ['systemctl', 'enable', 'ccos-node-init.service', 'kubelet.service'],
    ]);
  });

  it('leaves unchanged unit files alone on a re-run', async () => {
    const h = withUnits();
    h.fs.seed({ '/etc/systemd/system/kubelet.service': KUBELET });
    const result = await new InstallServicesStep().run(h.ctx);
    const units = (result.detail as { units: { name: string; changed: boolean }[] }).units;
    expect(units).toEqual([
      expect.objectContaining({ name: 'ccos-node-init.service', changed: true }),
      expect.objectContaining({ name: 'kubelet.service', changed: false }),
    ]);
  });

  it('fails with systemctl\'s words', async () => {
    const h = withUnits();
    h.exec.on(['systemctl', 'enable'], failed(1, 'Failed to enable unit: Unit file kubelet.service is masked.\n'));
    const result = await new InstallServicesStep().run(h.ctx);
    expect(result).toMatchObject({ ok: false, code: 'UNIT_REJECTED' });
    expect(result.ok ? '' : result.message).toContain('Unit file kubelet.service is masked');
  });
});

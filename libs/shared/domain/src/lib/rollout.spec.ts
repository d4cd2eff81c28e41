import { describe, expect, it } from 'vitest';
import type { ManifestFile } from './host-manifest';
import { allowedUnavailable, applySteps, isApplyKind, phaseAfterDrain, planRollout, type RolloutMember } from './rollout';

const member = (nodeId: string, fields: Partial<RolloutMember> = {}): RolloutMember => ({ nodeId, phase: 'PENDING', ready: true, unschedulable: false, ...fields });

describe('planRollout', () => {
  it('starts nodes in order up to the budget, counting the nodes it holds', () => {
    const members = [member('a'), member('b'), member('c')];
    expect(planRollout({ maxUnavailable: 1, isPercent: false }, members)).toMatchObject({ start: ['a'], unavailable: [], allowed: 1, finished: false });
    expect(planRollout({ maxUnavailable: 2, isPercent: false }, members).start).toEqual(['a', 'b']);

    const oneRebooting = [member('a', { phase: 'REBOOT' }), member('b'), member('c')];
    expect(planRollout({ maxUnavailable: 1, isPercent: false }, oneRebooting)).toMatchObject({ start: [], unavailable: ['a'] });
    expect(planRollout({ maxUnavailable: 2, isPercent: false }, oneRebooting).start).toEqual(['b']);
  });

  it('counts a node that is NotReady or cordoned by anyone against the budget, and never starts one', () => {
    const members = [member('a', { phase: 'DONE' }), member('b', { ready: false }), member('c'), member('d', { unschedulable: true })];
    expect(planRollout({ maxUnavailable: 1, isPercent: false }, members)).toMatchObject({ start: [], unavailable: ['b', 'd'] });
    expect(planRollout({ maxUnavailable: 3, isPercent: false }, members)).toMatchObject({ start: ['c'], unavailable: ['b', 'd'] });
    // A done node that went NotReady afterwards still takes a slot.
    expect(planRollout({ maxUnavailable: 1, isPercent: false }, [member('a', { phase: 'DONE', ready: false }), member('b')]).start).toEqual([]);
  });

  it('counts a node remediation is working on against the budget and starts it only once remediation is over', () => {
    const members = [member('a', { remediating: true }), member('b')];
    expect(planRollout({ maxUnavailable: 1, isPercent: false }, members)).toMatchObject({ start: [], unavailable: ['a'] });
    expect(planRollout({ maxUnavailable: 2, isPercent: false }, members)).toMatchObject({ start: ['b'], unavailable: ['a'] });
    expect(planRollout({ maxUnavailable: 2, isPercent: false }, [member('a'), member('b')]).start).toEqual(['a', 'b']);
  });

  it('is finished when every node is done or skipped', () => {
    expect(planRollout({ maxUnavailable: 1, isPercent: false }, [member('a', { phase: 'DONE' }), member('b', { phase: 'SKIPPED', ready: false })])).toMatchObject({ finished: true, unavailable: [] });
    expect(planRollout({ maxUnavailable: 1, isPercent: false }, [member('a', { phase: 'DONE' }), member('b', { phase: 'UNCORDON' })]).finished).toBe(false);
  });
});

describe('allowedUnavailable', () => {
  it('takes a percentage of the rollout\'s nodes, rounded down but at least one', () => {
    expect(allowedUnavailable({ maxUnavailable: 25, isPercent: true }, 10)).toBe(2);
    expect(allowedUnavailable({ maxUnavailable: 10, isPercent: true }, 3)).toBe(1);
    expect(allowedUnavailable({ maxUnavailable: 0, isPercent: true }, 30)).toBe(0);
    expect(allowedUnavailable({ maxUnavailable: 3, isPercent: false }, 2)).toBe(3);
  });
});

describe('the steps an apply run re-runs on a joined host', () => {
  const files: ManifestFile[] = [
    { path: '/usr/local/bin/kubelet', sha256: 'a'.repeat(64), step: 'DOWNLOAD_BINARIES' },
    { path: '/etc/systemd/system/ccos-node-init.service', sha256: 'b'.repeat(64), step: 'APPLY_IGNITION' },
    { path: '/etc/systemd/system/crio.service', sha256: 'c'.repeat(64), step: 'INSTALL_SERVICES' },
    { path: '/etc/kubernetes/kubeconfig', sha256: 'd'.repeat(64), step: 'START_KUBELET' },
  ];
  const drifted = (...paths: string[]) => paths.map((path) => ({ path, expected: 'e'.repeat(64), found: null }));

  it('UPGRADE: the steps that lay down the artifact set, every later step that wrote a file, then kubelet restarted on them', () => {
    expect(applySteps('UPGRADE', files, [])).toEqual(['DOWNLOAD_BINARIES', 'INSTALL_PACKAGES', 'INSTALL_SERVICES', 'APPLY_IGNITION', 'START_KUBELET']);
    // A host whose Ignition wrote nothing the record holds: nothing after the set's own steps.
    expect(applySteps('UPGRADE', files.filter((file) => file.step !== 'APPLY_IGNITION'), [])).toEqual(['DOWNLOAD_BINARIES', 'INSTALL_PACKAGES', 'INSTALL_SERVICES', 'START_KUBELET']);
  });

  it('REAPPLY: from the first step that wrote a drifted file, with the later steps that wrote files (they may write over it), never PREFLIGHT or the packages', () => {
    expect(applySteps('REAPPLY', files, drifted('/etc/systemd/system/ccos-node-init.service'))).toEqual(['APPLY_IGNITION', 'START_KUBELET']);
    expect(applySteps('REAPPLY', files, drifted('/etc/systemd/system/crio.service'))).toEqual(['INSTALL_SERVICES', 'APPLY_IGNITION', 'START_KUBELET']);
    expect(applySteps('REAPPLY', files, drifted('/usr/local/bin/kubelet'))).toEqual(['DOWNLOAD_BINARIES', 'INSTALL_SERVICES', 'APPLY_IGNITION', 'START_KUBELET']);
    // What START_KUBELET wrote, or a file nobody recorded: kubelet restarted, nothing written.
    expect(applySteps('REAPPLY', files, drifted('/etc/kubernetes/kubeconfig', '/etc/unknown'))).toEqual(['START_KUBELET']);
  });

  it('a drained node is rebooted or applied to by its rollout\'s kind', () => {
    expect(phaseAfterDrain('REBOOT')).toBe('REBOOT');
    expect(phaseAfterDrain('UPGRADE')).toBe('APPLY');
    expect(phaseAfterDrain('REAPPLY')).toBe('APPLY');
    expect(isApplyKind('REBOOT')).toBe(false);
  });
});

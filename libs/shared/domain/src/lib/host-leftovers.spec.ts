import { describe, expect, it } from 'vitest';
import { cleanupPaths, decideHostVerdict, parseHostScan, verdictAllowsInstall } from './host-leftovers';

const SCAN = [
  '@@machine-id', '0123456789abcdef0123456789abcdef',
  '@@kubelet-pki', '/var/lib/kubelet/pki/kubelet-client-current.pem',
  '@@kubeconfig', '/etc/kubernetes/kubelet.conf',
  '@@kubernetes-files', '/etc/kubernetes/kubelet.conf', '/etc/kubernetes/manifests/static.yaml',
  '@@kubelet-active', 'active',
  '@@kubelet-enabled', 'enabled',
  '@@end',
].join('\n');

describe('parseHostScan', () => {
  it('lists each leftover once under its kind, and the machine-id', () => {
    expect(parseHostScan(SCAN)).toEqual({
      machineId: '0123456789abcdef0123456789abcdef',
      leftovers: [
        { kind: 'KUBELET_CERTIFICATES', item: '/var/lib/kubelet/pki/kubelet-client-current.pem' },
        { kind: 'KUBECONFIG', item: '/etc/kubernetes/kubelet.conf' },
        { kind: 'KUBERNETES_FILES', item: '/etc/kubernetes/manifests/static.yaml' },
        { kind: 'KUBELET_SERVICE', item: 'kubelet.service (running)' },
        { kind: 'KUBELET_SERVICE', item: 'kubelet.service (enabled)' },
      ],
    });
  });

  it('finds nothing on a fresh host (kubelet inactive, not found)', () => {
    expect(parseHostScan('@@machine-id\n0123456789abcdef0123456789abcdef\n@@kubelet-pki\n@@kubeconfig\n@@kubernetes-files\n@@kubelet-active\ninactive\n@@kubelet-enabled\nnot-found\n@@end\n').leftovers).toEqual([]);
  });
});

describe('decideHostVerdict', () => {
  const at = new Date('2026-12-01T00:00:00Z');
  it('is CLEAN without leftovers, CLEANABLE with them, REINSTALL_REQUIRED for a machine this service removed or a live Node of the name', () => {
    expect(decideHostVerdict([], { at }).verdict).toBe('CLEAN');
    const leftovers = parseHostScan(SCAN).leftovers;
    const cleanable = decideHostVerdict(leftovers, { at });
    expect(cleanable.verdict).toBe('CLEANABLE');
    expect(cleanable.leftovers).toBe(leftovers);
    expect(decideHostVerdict([...leftovers, { kind: 'REMOVED_MACHINE', item: 'node w-1 (removed)' }], { at }).verdict).toBe('REINSTALL_REQUIRED');
    expect(decideHostVerdict([{ kind: 'CLUSTER_NODE', item: 'Node/w-1 (Ready)' }], { at, liveNodeNamed: true }).verdict).toBe('REINSTALL_REQUIRED');
  });

  it('lets an install start only on a clean host or a cleaned one', () => {
    const cleanable = decideHostVerdict([{ kind: 'KUBECONFIG', item: '/etc/kubernetes/kubelet.conf' }]);
    expect(verdictAllowsInstall(null)).toBe(true);
    expect(verdictAllowsInstall(decideHostVerdict([]))).toBe(true);
    expect(verdictAllowsInstall(cleanable)).toBe(false);
    expect(verdictAllowsInstall({ ...cleanable, cleanedAt: at.toISOString() })).toBe(true);
    expect(verdictAllowsInstall({ ...decideHostVerdict([{ kind: 'REMOVED_MACHINE', item: 'x' }]), cleanedAt: at.toISOString() })).toBe(false);
  });
});

describe('cleanupPaths', () => {
  it('deletes only listed files inside the kubelet and kubernetes folders', () => {
    expect(cleanupPaths([
      { kind: 'KUBECONFIG', item: '/etc/kubernetes/kubelet.conf' },
      { kind: 'KUBERNETES_FILES', item: '/etc/passwd' },
      { kind: 'KUBERNETES_FILES', item: '/etc/kubernetes/../shadow' },
      { kind: 'KUBELET_SERVICE', item: 'kubelet.service (running)' },
      { kind: 'CLUSTER_CSRS', item: 'csr-abc' },
    ])).toEqual(['/etc/kubernetes/kubelet.conf']);
  });
});

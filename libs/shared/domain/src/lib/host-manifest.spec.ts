import { describe, expect, it } from 'vitest';
import { driftOf, hostManifestState, kubeletArgvOf, kubeletVersionOf, manifestOf, recordableFlags, runningChanges, runningKubeletOf, writtenFilesOf } from './host-manifest';

const A = 'a'.repeat(64);
const B = 'b'.repeat(64);

describe('host manifests', () => {
  it('takes from a step event only absolute paths with a SHA-256', () => {
    expect(writtenFilesOf({ written: { '/etc/ok': A, 'relative': A, '/etc/../shadow': A, '/etc/short': 'abc', '/etc/upper': A.toUpperCase(), '/etc/\nnewline': A } })).toEqual({ '/etc/ok': A });
    expect(writtenFilesOf({ written: [A] })).toEqual({});
    expect(writtenFilesOf(null)).toEqual({});
  });

  it('lets a later step\'s write of a path win, and sorts by path', () => {
    expect(manifestOf([
      { step: 'INSTALL_SERVICES', detail: { written: { '/etc/systemd/system/kubelet.service': A, '/etc/systemd/system/crio.service': A } } },
      { step: 'APPLY_IGNITION', detail: { written: { '/etc/systemd/system/kubelet.service': B } } },
      { step: 'START_KUBELET', detail: { other: true } },
    ])).toEqual([
      { path: '/etc/systemd/system/crio.service', sha256: A, step: 'INSTALL_SERVICES' },
      { path: '/etc/systemd/system/kubelet.service', sha256: B, step: 'APPLY_IGNITION' },
    ]);
  });

  it('calls drift only files found changed or gone, not those the inspection did not look at', () => {
    const recorded = [{ path: '/a', sha256: A, step: 'APPLY_IGNITION' as const }, { path: '/b', sha256: A, step: 'APPLY_IGNITION' as const }, { path: '/c', sha256: A, step: 'APPLY_IGNITION' as const }];
    expect(driftOf(recorded, new Map([['/a', A], ['/b', B]]))).toEqual([{ path: '/b', expected: A, found: B }]);
    expect(driftOf(recorded, new Map([['/c', null]]))).toEqual([{ path: '/c', expected: A, found: null }]);
  });

  it('says DRIFTED before OUTDATED, and UNINSPECTED until a first inspection', () => {
    const drift = [{ path: '/a', expected: A, found: null }];
    expect(hostManifestState({ inspectedAt: new Date(), drift }, false)).toBe('DRIFTED');
    expect(hostManifestState({ inspectedAt: new Date(), drift: [] }, false)).toBe('OUTDATED');
    expect(hostManifestState({ inspectedAt: null, drift: [] }, true)).toBe('UNINSPECTED');
    expect(hostManifestState({ inspectedAt: new Date(), drift: [] }, true)).toBe('CURRENT');
  });
});

describe('runningKubeletOf / recordableFlags', () => {
  it('reads what START_KUBELET found, leaving out what is not plain bounded text', () => {
    expect(runningKubeletOf({ running: { kernelRelease: '5.14.0-427.el9.x86_64', kubeletVersion: 'v1.31.4', kubeletFlags: ['--node-ip=198.18.0.5', 'bad\nline', 7, 'x'.repeat(5000)] } })).toEqual({
      kernelRelease: '5.14.0-427.el9.x86_64',
      kubeletVersion: 'v1.31.4',
      kubeletFlags: ['--node-ip=198.18.0.5'],
    });
    expect(runningKubeletOf({ running: { kernelRelease: '', kubeletVersion: 3 } })).toEqual({ kernelRelease: null, kubeletVersion: null, kubeletFlags: [] });
    expect(runningKubeletOf({ written: {} })).toBeNull();
    expect(runningKubeletOf(null)).toBeNull();
    expect(runningKubeletOf({ running: ['x'] })).toBeNull();
  });

  it('hides the values of secret-looking flags in both forms, and nothing else', () => {
    expect(recordableFlags(['--config=/etc/kubernetes/kubelet.conf', '--bootstrap-token=abc.def', '--registry-password', 'hunter2', '--v=2', '--node-labels', 'a=b'])).toEqual([
      '--config=/etc/kubernetes/kubelet.conf', '--bootstrap-token=<redacted>', '--registry-password', '<redacted>', '--v=2', '--node-labels', 'a=b',
    ]);
  });
});

describe('kubeletArgvOf / kubeletVersionOf / runningChanges', () => {
  it('takes the arguments after the executable named kubelet, direct or through an interpreter, secrets hidden', () => {
    expect(kubeletArgvOf('/usr/bin/kubelet\0--v=2\0--bootstrap-token=x\0')).toEqual({ executable: '/usr/bin/kubelet', flags: ['--v=2', '--bootstrap-token=<redacted>'] });
    expect(kubeletArgvOf('node\0/usr/local/bin/kubelet\0--node-labels\0\0')).toEqual({ executable: '/usr/local/bin/kubelet', flags: ['--node-labels', ''] });
    expect(kubeletArgvOf('')).toEqual({ executable: null, flags: [] });
    expect(kubeletArgvOf('/usr/bin/crio\0--x\0')).toEqual({ executable: null, flags: [] });
    expect(kubeletVersionOf('Kubernetes v1.31.4+rhcos.1\n')).toBe('v1.31.4+rhcos.1');
    expect(kubeletVersionOf('command not found')).toBeNull();
  });

  it('names what changed since the install, and nothing for a side that was not read', () => {
    const installed = { kernelRelease: '5.14.0-427.el9.x86_64', kubeletVersion: 'v1.31.4', kubeletFlags: ['--v=2'] };
    expect(runningChanges(installed, installed)).toEqual([]);
    expect(runningChanges(installed, { kernelRelease: '5.14.0-362.el9.x86_64', kubeletVersion: 'v1.31.5', kubeletFlags: ['--v=4'] })).toEqual(['KERNEL', 'KUBELET_VERSION', 'KUBELET_FLAGS']);
    expect(runningChanges(installed, { kernelRelease: null, kubeletVersion: null, kubeletFlags: [] })).toEqual([]);
    expect(runningChanges(null, installed)).toEqual([]);
    expect(runningChanges(installed, null)).toEqual([]);
  });
});

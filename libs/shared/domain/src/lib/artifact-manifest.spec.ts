import { describe, expect, it } from 'vitest';
import { REQUIRED_BINARIES, missingArtifacts, parseManifest } from './artifact-manifest';

const sha = 'a'.repeat(64);
const good = { name: 'kubelet', kind: 'binary', size: 10, sha256: sha, version: '4.12' };

describe('parseManifest', () => {
  it('accepts the contract shape and lower-cases hashes', () => {
    const manifest = parseManifest({ version: '4.12.0', artifacts: [good, { ...good, name: 'kubelet.service', kind: 'unit', sha256: 'A'.repeat(64) }] });
    expect(manifest.version).toBe('4.12.0');
    expect(manifest.artifacts[1]?.sha256).toBe(sha);
  });

  it.each([
    [{ ...good, name: '../../etc/shadow' }, 'not a plain file name'],
    [{ ...good, name: 'a/b' }, 'not a plain file name'],
    [{ ...good, name: '.hidden' }, 'not a plain file name'],
    [{ ...good, kind: 'iso' }, 'not one of binary, rpm, unit'],
    [{ ...good, size: -1 }, 'not a byte count'],
    [{ ...good, size: 1.5 }, 'not a byte count'],
    [{ ...good, sha256: 'xyz' }, 'not 64 hex digits'],
  ])('refuses %j', (entry, message) => {
    expect(() => parseManifest({ artifacts: [entry] })).toThrow(message);
  });

  it('refuses duplicates and a missing list', () => {
    expect(() => parseManifest({ artifacts: [good, good] })).toThrow('appears twice');
    expect(() => parseManifest({})).toThrow('`artifacts` array');
  });
});

describe('missingArtifacts', () => {
  it('names each required binary and unit, and the rpm set, that a set lacks', () => {
    expect(missingArtifacts([{ kind: 'binary', name: 'kubelet' }])).toEqual([
      'binary/oc', 'binary/hyperkube', 'binary/kube-apiserver', 'binary/kube-controller-manager', 'binary/kube-scheduler', 'binary/ignition', 'binary/coreos-installer',
      'unit/kubelet.service', 'rpm/*',
    ]);
    const complete = [...REQUIRED_BINARIES.map((name) => ({ kind: 'binary' as const, name })), { kind: 'unit' as const, name: 'kubelet.service' }, { kind: 'rpm' as const, name: 'cri-o-1.25.0-1.x86_64.rpm' }];
    expect(missingArtifacts(complete)).toEqual([]);
  });
});

import { describe, expect, it } from 'vitest';
import { kubeletExtraArgs, kubeletSysconfig, refusedKubeletLabels } from './kubelet-extra-args';

describe('KUBELET_EXTRA_ARGS', () => {
  it('joins labels and taints as kubelet reads them', () => {
    expect(kubeletExtraArgs(
      [{ key: 'disk-type', value: 'ssd' }, { key: 'node-role.kubernetes.io/infra', value: '' }],
      [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }, { key: 'maintenance', value: null, effect: 'NoExecute' }],
    )).toBe('--node-labels=disk-type=ssd,node-role.kubernetes.io/infra= --register-with-taints=dedicated=gpu:NoSchedule,maintenance:NoExecute');
    expect(kubeletExtraArgs([], [])).toBe('');
  });

  it('gives a node group\'s node its providerID first', () => {
    expect(kubeletExtraArgs([{ key: 'pool', value: 'a' }], [], 'ccos://lab/0f1e')).toBe('--provider-id=ccos://lab/0f1e --node-labels=pool=a');
    expect(kubeletSysconfig(null, [], [], 'ccos://lab/0f1e')).toContain('KUBELET_EXTRA_ARGS="--provider-id=ccos://lab/0f1e"');
  });

  it('writes a fresh file or replaces only the KUBELET_EXTRA_ARGS line', () => {
    expect(kubeletSysconfig(null, [{ key: 'a', value: 'b' }], [])).toBe(
      '# Node labels and taints, written by the ccos-scaler agent (boot-worker).\nKUBELET_EXTRA_ARGS="--node-labels=a=b"\n',
    );
    expect(kubeletSysconfig('HTTP_PROXY=http://proxy:3128\nKUBELET_EXTRA_ARGS="--node-labels=old=1"\n', [], [])).toBe(
      'HTTP_PROXY=http://proxy:3128\nKUBELET_EXTRA_ARGS=""\n',
    );
    expect(kubeletSysconfig('HTTP_PROXY=x', [{ key: 'a', value: 'b' }], [])).toBe('HTTP_PROXY=x\nKUBELET_EXTRA_ARGS="--node-labels=a=b"\n');
  });

  it('finds labels kubelet may not set on itself', () => {
    expect(refusedKubeletLabels([
      { key: 'node-role.kubernetes.io/worker', value: '' },
      { key: 'topology.kubernetes.io/zone', value: 'a' },
      { key: 'kubernetes.io/role', value: 'x' },
      { key: 'foo.k8s.io/bar', value: 'x' },
      { key: 'example.com/x', value: 'y' },
    ])).toEqual(['kubernetes.io/role', 'foo.k8s.io/bar']);
  });
});

import { describe, expect, it } from 'vitest';
import { KubeletFlagError, parseDuration, parseFlags, parseNodeLabels, parseTaints, resolveOptions } from './kubelet-options';
import { nodeObject } from './node-status';

describe('kubelet flags', () => {
  it('merges repeated --node-labels and parses taints', () => {
    const flags = parseFlags(['--node-labels=node-role.kubernetes.io/worker,a=b', '--node-labels', 'c=d,', '--v=2', '--fail-swap-on']);
    expect(parseNodeLabels(flags.get('node-labels') ?? [])).toEqual({ 'node-role.kubernetes.io/worker': '', a: 'b', c: 'd' });
    expect(flags.get('fail-swap-on')).toEqual(['true']);
    expect(parseTaints(['dedicated=infra:NoSchedule,gpu:NoExecute'])).toEqual([
      { key: 'dedicated', value: 'infra', effect: 'NoSchedule' },
      { key: 'gpu', effect: 'NoExecute' },
    ]);
    expect(() => parseTaints(['broken'])).toThrow(KubeletFlagError);
  });

  it('refuses kubernetes.io labels a kubelet may not set on itself', () => {
    expect(() => parseNodeLabels(['kubernetes.io/role=master'])).toThrow(/unknown 'kubernetes.io' or 'k8s.io' labels/);
    expect(parseNodeLabels(['node.kubernetes.io/instance-type=vm,topology.kubernetes.io/zone=a'])).toHaveProperty('topology.kubernetes.io/zone', 'a');
  });

  it('registers the Node with --provider-id as spec.providerID', () => {
    expect(nodeObject({ ...resolveOptions(['--provider-id=ccos://lab/abc', '--hostname-override=w1']) }, true)).toMatchObject({ metadata: { name: 'w1' }, spec: { providerID: 'ccos://lab/abc' } });
    expect((nodeObject(resolveOptions(['--hostname-override=w1']), true) as { spec: Record<string, unknown> }).spec).not.toHaveProperty('providerID');
  });

  it('reads Go-style durations', () => {
    expect(parseDuration('15m')).toBe(900);
    expect(parseDuration('1m30s')).toBe(90);
    expect(parseDuration('2')).toBe(2);
  });
});

import { describe, expect, it } from 'vitest';
import type { JsonObject } from './json-value';
import { applyJsonPatch, applyMergePatch, applyStrategicMergePatch } from './patch';

const podFixture = {
  metadata: { name: 'p', labels: { a: '1', b: '2' }, finalizers: ['x'] },
  spec: {
    containers: [
      { name: 'app', image: 'app:1', env: [{ name: 'A', value: '1' }] },
      { name: 'side', image: 'side:1' },
    ],
    tolerations: [{ key: 't1' }],
  },
  status: { conditions: [{ type: 'Ready', status: 'False' }, { type: 'PodScheduled', status: 'True' }] },
};
const pod = podFixture as unknown as JsonObject & typeof podFixture;

describe('JSON merge patch (RFC 7386)', () => {
  it('merges objects, removes nulls, replaces lists', () => {
    const result = applyMergePatch(pod, { metadata: { labels: { a: null, c: '3' } }, spec: { tolerations: [{ key: 't2' }] } }) as typeof pod;
    expect(result.metadata.labels).toEqual({ b: '2', c: '3' });
    expect(result.spec.tolerations).toEqual([{ key: 't2' }]);
    expect(result.spec.containers).toHaveLength(2);
  });
});

describe('JSON patch (RFC 6902)', () => {
  it('applies add, replace, remove, move, copy and test', () => {
    const result = applyJsonPatch(pod, [
      { op: 'test', path: '/metadata/name', value: 'p' },
      { op: 'add', path: '/metadata/labels/c', value: '3' },
      { op: 'replace', path: '/spec/containers/0/image', value: 'app:2' },
      { op: 'remove', path: '/spec/containers/1' },
      { op: 'copy', from: '/metadata/labels/a', path: '/metadata/labels/d' },
      { op: 'move', from: '/metadata/labels/b', path: '/metadata/labels/e' },
      { op: 'add', path: '/metadata/finalizers/-', value: 'y' },
      { op: 'add', path: '/metadata/annotations', value: { 'x~y/z': 'v' } },
      { op: 'replace', path: '/metadata/annotations/x~0y~1z', value: 'w' },
    ]) as unknown as typeof pod & { metadata: { annotations: Record<string, string> } };
    expect(result.metadata.labels).toEqual({ a: '1', c: '3', d: '1', e: '2' });
    expect(result.spec.containers).toEqual([{ name: 'app', image: 'app:2', env: [{ name: 'A', value: '1' }] }]);
    expect(result.metadata.finalizers).toEqual(['x', 'y']);
    expect(result.metadata.annotations).toEqual({ 'x~y/z': 'w' });
    expect(pod.spec.containers).toHaveLength(2);
  });

  it('fails a test operation that does not hold, and paths that do not exist', () => {
    expect(() => applyJsonPatch(pod, [{ op: 'test', path: '/metadata/name', value: 'q' }])).toThrow(/test failed/);
    expect(() => applyJsonPatch(pod, [{ op: 'replace', path: '/spec/nothing/here', value: 1 }])).toThrow(/missing/);
  });
});

describe('strategic merge patch', () => {
  it('merges lists by their merge key and keeps the other items', () => {
    const result = applyStrategicMergePatch(pod, {
      spec: { containers: [{ name: 'app', image: 'app:2', env: [{ name: 'B', value: '2' }] }] },
      status: { conditions: [{ type: 'Ready', status: 'True' }] },
    }) as unknown as typeof pod;
    expect(result.spec.containers).toEqual([
      { name: 'app', image: 'app:2', env: [{ name: 'A', value: '1' }, { name: 'B', value: '2' }] },
      { name: 'side', image: 'side:1' },
    ]);
    expect(result.status.conditions).toEqual([{ type: 'Ready', status: 'True' }, { type: 'PodScheduled', status: 'True' }]);
  });

  it('replaces lists without a patch strategy and merges primitive lists with one', () => {
    const result = applyStrategicMergePatch(pod, { spec: { tolerations: [{ key: 't2' }] }, metadata: { finalizers: ['z'] } }) as unknown as typeof pod;
    expect(result.spec.tolerations).toEqual([{ key: 't2' }]);
    expect(result.metadata.finalizers).toEqual(['x', 'z']);
  });

  it('honours $patch: delete / replace, $deleteFromPrimitiveList and $retainKeys', () => {
    const result = applyStrategicMergePatch(pod, {
      metadata: { $deleteFromPrimitiveList: undefined, '$deleteFromPrimitiveList/finalizers': ['x'], labels: { $patch: 'replace', z: '9' } },
      spec: { containers: [{ name: 'side', $patch: 'delete' }], $retainKeys: ['containers'] },
    } as never) as unknown as typeof pod;
    expect(result.metadata.finalizers).toEqual([]);
    expect(result.metadata.labels).toEqual({ z: '9' });
    expect(result.spec).toEqual({ containers: [pod.spec.containers[0]] });
  });

  it('sets unschedulable the way kubectl cordon does', () => {
    expect(applyStrategicMergePatch({ metadata: { name: 'n' }, spec: {} }, { spec: { unschedulable: true } })).toEqual({ metadata: { name: 'n' }, spec: { unschedulable: true } });
  });
});

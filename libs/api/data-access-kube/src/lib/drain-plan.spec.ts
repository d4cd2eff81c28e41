import type { V1Pod, V1PodDisruptionBudget } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { bare, message } from '@ccos/shared/messages';
import {
  coveringBudgets, DAEMONSET_FATAL, DAEMONSET_WARNING, drainFilters, forcefulOptionsFor, LOCAL_STORAGE_FATAL, LOCAL_STORAGE_WARNING, runFilters, summarizePlan,
  UNMANAGED_FATAL, UNMANAGED_WARNING, type DaemonSetLookup, type DrainOptions, type DrainPlanPod, type PlannedPod,
} from './drain-plan';
import { KubeApiError } from './kube-client';

/**
 * The three phases of a drain plan, each alone: kubectl's filters on one pod, the budgets covering
 * the pods to evict, and the plan's wording. (The whole plan against kube-sim: drain.spec.ts.)
 */
const NOW = Date.parse('2026-12-01T12:00:00Z');

/** DaemonSets that exist, answered like the API does (null, or its 404). */
const existing = (...names: string[]): DaemonSetLookup => async (namespace, name) =>
  names.includes(`${namespace}/${name}`)
    ? null
    : new KubeApiError('not found', `read daemonset ${namespace}/${name}`, 'status', 404, { code: 404, message: `daemonsets.apps "${name}" not found` });

const owned = (kind: string, name: string, apiVersion = 'apps/v1') => [{ kind, name, apiVersion, controller: true, uid: `uid-${name}` }];

const pods: Record<string, V1Pod> = {
  managed: { metadata: { namespace: 'shop', name: 'web-1', ownerReferences: owned('ReplicaSet', 'web') } },
  unmanaged: { metadata: { namespace: 'shop', name: 'bare' } },
  finishedUnmanaged: { metadata: { namespace: 'shop', name: 'job-done' }, status: { phase: 'Succeeded' } },
  daemon: { metadata: { namespace: 'kube-system', name: 'agent-x', ownerReferences: owned('DaemonSet', 'agent') } },
  orphanedDaemon: { metadata: { namespace: 'kube-system', name: 'old-y', ownerReferences: owned('DaemonSet', 'gone') } },
  mirror: { metadata: { namespace: 'kube-system', name: 'etcd-n1', annotations: { 'kubernetes.io/config.mirror': 'abc' } } },
  scratch: { metadata: { namespace: 'shop', name: 'cache-1', ownerReferences: owned('ReplicaSet', 'cache') }, spec: { containers: [], volumes: [{ name: 'tmp', emptyDir: {} }] } },
  scratchUnmanaged: { metadata: { namespace: 'shop', name: 'tmp-bare' }, spec: { containers: [], volumes: [{ name: 'tmp', emptyDir: {} }] } },
  terminating: { metadata: { namespace: 'shop', name: 'stuck', deletionTimestamp: new Date(NOW - 120_000), ownerReferences: owned('ReplicaSet', 'web') } },
};

describe('drain filters (one pod, kubectl’s order)', () => {
  it.each<[string, keyof typeof pods, DrainOptions, { delete: boolean; kind: string; class?: string; warnings: string[] }]>([
    ['a managed pod is evicted', 'managed', {}, { delete: true, kind: 'okay', warnings: [] }],
    ['a pod without a controller is refused', 'unmanaged', {}, { delete: false, kind: 'error', class: 'unmanaged', warnings: [] }],
    ['... or evicted with a warning under force', 'unmanaged', { force: true }, { delete: true, kind: 'warning', class: 'unmanaged', warnings: [UNMANAGED_WARNING] }],
    ['a finished pod passes every filter', 'finishedUnmanaged', {}, { delete: true, kind: 'okay', warnings: [] }],
    ['a DaemonSet pod refuses the drain', 'daemon', {}, { delete: false, kind: 'error', class: 'daemonset', warnings: [] }],
    ['... or stays, with a warning, under ignoreDaemonSets', 'daemon', { ignoreDaemonSets: true }, { delete: false, kind: 'warning', class: 'daemonset', warnings: [DAEMONSET_WARNING] }],
    ['a pod of a vanished DaemonSet is refused', 'orphanedDaemon', {}, { delete: false, kind: 'error', class: 'orphaned-daemonset', warnings: [] }],
    ['... or evicted under force', 'orphanedDaemon', { force: true }, { delete: true, kind: 'okay', class: 'orphaned-daemonset', warnings: ['daemonsets.apps "gone" not found'] }],
    ['a mirror pod is skipped silently', 'mirror', {}, { delete: false, kind: 'skip', class: 'mirror', warnings: [] }],
    ['emptyDir data refuses the drain', 'scratch', {}, { delete: false, kind: 'error', class: 'local-storage', warnings: [] }],
    ['... or is evicted with a warning under deleteEmptyDirData', 'scratch', { deleteEmptyDirData: true }, { delete: true, kind: 'okay', class: 'local-storage', warnings: [LOCAL_STORAGE_WARNING] }],
    ['the next filter still runs after a warning (emptyDir, then no controller)', 'scratchUnmanaged', { deleteEmptyDirData: true }, { delete: false, kind: 'error', class: 'unmanaged', warnings: [LOCAL_STORAGE_WARNING] }],
    ['a pod deleting for longer than the limit is skipped', 'terminating', { skipWaitForDeleteTimeoutSeconds: 60 }, { delete: false, kind: 'skip', class: 'terminating', warnings: [] }],
    ['... but not without a limit', 'terminating', {}, { delete: true, kind: 'okay', warnings: [] }],
  ])('%s', async (_case, pod, options, expected) => {
    const { status, podClass, warnings } = await runFilters(pods[pod], drainFilters(options, existing('kube-system/agent'), () => NOW));
    expect({ delete: status.delete, kind: status.kind, warnings: warnings.map((warning) => warning.message), ...(podClass === undefined ? {} : { class: podClass }) }).toEqual(expected);
  });

  // What the console shows under each forceful option before it is ticked: the pods it would delete.
  it.each<[keyof typeof pods, string[]]>([
    ['managed', []],
    ['finishedUnmanaged', []],
    ['unmanaged', ['force']],
    ['orphanedDaemon', ['force']],
    ['scratch', ['deleteEmptyDirData']],
    ['scratchUnmanaged', ['force', 'deleteEmptyDirData']],
    ['daemon', []],
    ['mirror', []],
  ])('the %s pod is deleted with %j', async (pod, expected) => {
    const forceful = drainFilters({ force: true, deleteEmptyDirData: true, ignoreDaemonSets: true }, existing('kube-system/agent'), () => NOW);
    expect(await forcefulOptionsFor(pods[pod], forceful)).toEqual(expected);
  });

  it('refusal texts are kubectl’s', async () => {
    const fatal = async (pod: keyof typeof pods) => (await runFilters(pods[pod], drainFilters({}, existing('kube-system/agent'), () => NOW))).status.message;
    expect(await fatal('daemon')).toBe(DAEMONSET_FATAL);
    expect(await fatal('scratch')).toBe(LOCAL_STORAGE_FATAL);
    expect(await fatal('unmanaged')).toBe(UNMANAGED_FATAL);
  });
});

const planned = (pod: string, action: DrainPlanPod['action'], reason = '', warnings: string[] = []): PlannedPod => {
  const [namespace = '', name = ''] = pod.split('/');
  const coded = (text: string) => bare(message('drain.raw', { text }));
  return { pod, namespace, name, uid: '', class: 'managed', action, reason, reasonCoded: coded(reason), controller: null, pdbs: [], deletedWith: [], warnings: warnings.map((text) => ({ message: text, coded: coded(text) })) };
};

describe('covering budgets', () => {
  const pdb = (namespace: string, name: string, app: string): V1PodDisruptionBudget => ({
    metadata: { namespace, name },
    spec: { selector: { matchLabels: { app } } },
    status: { disruptionsAllowed: 0, currentHealthy: 2, desiredHealthy: 2, expectedPods: 2 },
  });
  const labelled = (namespace: string, name: string, app: string): V1Pod => ({ metadata: { namespace, name, labels: { app } } });

  it('lists a budget only for pods it selects in its own namespace, and notes it on each', () => {
    const evicting = [planned('shop/web-1', 'evict'), planned('shop/db-1', 'evict'), planned('other/web-9', 'evict')];
    const budgets = coveringBudgets(evicting, [labelled('shop', 'web-1', 'web'), labelled('shop', 'db-1', 'db'), labelled('other', 'web-9', 'web')], [pdb('shop', 'web-pdb', 'web'), pdb('shop', 'idle-pdb', 'none')]);
    expect(budgets).toEqual([{ namespace: 'shop', name: 'web-pdb', disruptionsAllowed: 0, currentHealthy: 2, desiredHealthy: 2, pods: ['shop/web-1'] }]);
    expect(evicting.map((entry) => entry.pdbs)).toEqual([['web-pdb'], [], []]);
  });
});

describe('summarizing the plan', () => {
  it('groups refusal lines in a fixed order, keeps warnings of the pods that go on, and words one refusal', () => {
    const plan = summarizePlan('n1', [
      planned('shop/bare', 'refuse', UNMANAGED_FATAL),
      planned('kube-system/agent-x', 'refuse', DAEMONSET_FATAL),
      planned('shop/bare-2', 'refuse', UNMANAGED_FATAL),
      planned('shop/cache', 'evict', LOCAL_STORAGE_WARNING, [LOCAL_STORAGE_WARNING]),
    ], []);
    expect(plan.refusals).toEqual([
      `cannot delete ${DAEMONSET_FATAL}: kube-system/agent-x`,
      `cannot delete ${UNMANAGED_FATAL}: shop/bare, shop/bare-2`,
    ]);
    expect(plan.warnings).toEqual([`${LOCAL_STORAGE_WARNING}: shop/cache`]);
    expect(plan.refusalsCoded).toHaveLength(2);
    expect(plan.allowed).toBe(false);
    expect(plan.refusal).toBe(`unable to drain node "n1" due to error: [${plan.refusals.join(', ')}]`);
    expect(plan.pods[3]).not.toHaveProperty('warnings');
  });

  it('allows a drain with nothing refused', () => {
    expect(summarizePlan('n1', [planned('shop/web-1', 'evict')], [])).toMatchObject({ allowed: true, refusal: null, refusals: [], warnings: [] });
  });
});

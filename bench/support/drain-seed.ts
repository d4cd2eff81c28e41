import { execFile } from 'node:child_process';
import type { KubeSim } from '@ccos/tools/kube-sim';

/** What the drain benchmarks share: the real kubectl, a node seeded with many pods, and a median. */
export const KUBECTL = '/usr/bin/kubectl';
export const REPLICA_SETS = 10;

export function kubectl(env: NodeJS.ProcessEnv, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(KUBECTL, args, { env, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

/**
 * One worker node with `pods` pods of 10 ReplicaSets in namespace `bench`; budgets on half of
 * the sets, all allowing the drain (some absolute, some relative to the controller's scale).
 */
export function seedNode(sim: KubeSim, node: string, pods: number): void {
  const res = (name: string) => sim.resource(name);
  sim.api.seed(res('nodes'), {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: node, labels: { 'node-role.kubernetes.io/worker': '' } },
    status: { conditions: [{ type: 'Ready', status: 'True' }] },
  });
  for (let r = 0; r < REPLICA_SETS; r++) {
    const app = `${node}-app-${r}`;
    const perSet = Math.ceil(pods / REPLICA_SETS);
    const rs = sim.api.seed(res('replicasets'), {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: app, namespace: 'bench' },
      spec: { replicas: perSet, selector: { matchLabels: { app } }, template: { metadata: { labels: { app } }, spec: { containers: [{ name: 'c', image: 'app' }] } } },
    });
    if (r % 2 === 0) {
      // Budgets that permit the drain: some absolute, some relative to the controller's scale.
      sim.api.seed(res('poddisruptionbudgets'), {
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: { name: `${app}-budget`, namespace: 'bench' },
        spec: { ...(r % 4 === 0 ? { minAvailable: 0 } : { maxUnavailable: '100%' }), selector: { matchLabels: { app } } },
      });
    }
    for (let p = 0; p < perSet && r * perSet + p < pods; p++) {
      sim.api.seed(res('pods'), {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: `${app}-${p}`,
          namespace: 'bench',
          labels: { app },
          ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: app, uid: rs.metadata.uid ?? '', controller: true }],
        },
        spec: { nodeName: node, terminationGracePeriodSeconds: 30, containers: [{ name: 'c', image: 'app' }] },
        status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
      });
    }
  }
}

export function podsOn(sim: KubeSim, node: string): number {
  return sim.store.list(sim.resource('pods'), { nodeName: node }).length;
}

export const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

import { execFile } from 'node:child_process';

/**
 * What the tests that hold our drains against the real `kubectl drain` share: the seed both
 * simulators start from, kubectl's flags for a set of drain options, and the parsing of
 * kubectl's refusal line.
 */

export const KUBECTL = '/usr/bin/kubectl';

/** The options `kubectl drain` takes, named like drainNode's. */
export interface DrainFlagOptions {
  force?: boolean;
  deleteEmptyDirData?: boolean;
  ignoreDaemonSets?: boolean;
  gracePeriodSeconds?: number;
  timeoutSeconds?: number;
}

const RS_UID = 'd1f0c7e2-0000-4000-8000-0000000000a1';
const CACHE_RS_UID = 'd1f0c7e2-0000-4000-8000-0000000000a2';
const API_RS_UID = 'd1f0c7e2-0000-4000-8000-0000000000a3';
const DB_RS_UID = 'd1f0c7e2-0000-4000-8000-0000000000db';
const DS_UID = 'd1f0c7e2-0000-4000-8000-0000000000d5';
const GONE_DS_UID = 'd1f0c7e2-0000-4000-8000-0000000000d6';

const owner = (kind: string, name: string, uid: string) => `[{apiVersion: apps/v1, kind: ${kind}, name: ${name}, uid: ${uid}, controller: true, blockOwnerDeletion: true}]`;
const ready = '{phase: Running, conditions: [{type: Ready, status: "True"}], containerStatuses: [{name: c, ready: true, restartCount: 0, image: x, imageID: x, state: {running: {}}}]}';
const readyNode = (name: string) => `apiVersion: v1\nkind: Node\nmetadata: {name: ${name}, labels: {kubernetes.io/hostname: ${name}, node-role.kubernetes.io/worker: ""}}\nstatus: {conditions: [{type: Ready, status: "True"}]}`;

/**
 * w1: one pod of every class kubectl drain tells apart (ReplicaSet under a PDB that allows it,
 * emptyDir, DaemonSet, DaemonSet gone, mirror, unmanaged, Succeeded); w3: ReplicaSet, DaemonSet
 * and mirror pods only; w2: a pod whose PDB allows no disruption; w4: spare.
 */
export const DRAIN_SEED = [
  readyNode('w1'),
  readyNode('w2'),
  readyNode('w3'),
  readyNode('w4'),
  `apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web-6d4f8, namespace: shop, uid: ${RS_UID}}
spec: {replicas: 1, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: web}]}}}`,
  `apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: cache-5b7c9, namespace: shop, uid: ${CACHE_RS_UID}}
spec: {replicas: 1, selector: {matchLabels: {app: cache}}, template: {metadata: {labels: {app: cache}}, spec: {containers: [{name: c, image: cache}]}}}`,
  `apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: api-7f9d2, namespace: shop, uid: ${API_RS_UID}}
spec: {replicas: 1, selector: {matchLabels: {app: api}}, template: {metadata: {labels: {app: api}}, spec: {containers: [{name: c, image: api}]}}}`,
  `apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: db-5c9b7, namespace: shop, uid: ${DB_RS_UID}}
spec: {replicas: 1, selector: {matchLabels: {app: db}}, template: {metadata: {labels: {app: db}}, spec: {containers: [{name: c, image: db}]}}}`,
  `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: node-agent, namespace: kube-system, uid: ${DS_UID}}
spec: {selector: {matchLabels: {app: agent}}, template: {metadata: {labels: {app: agent}}, spec: {containers: [{name: c, image: agent}]}}}`,
  `apiVersion: v1
kind: Pod
metadata: {name: web-6d4f8-aaaaa, namespace: shop, labels: {app: web}, ownerReferences: ${owner('ReplicaSet', 'web-6d4f8', RS_UID)}}
spec: {nodeName: w1, terminationGracePeriodSeconds: 1, containers: [{name: c, image: web}]}
status: ${ready}`,
  `apiVersion: v1
kind: Pod
metadata: {name: cache-5b7c9-bbbbb, namespace: shop, labels: {app: cache}, ownerReferences: ${owner('ReplicaSet', 'cache-5b7c9', CACHE_RS_UID)}}
spec: {nodeName: w1, terminationGracePeriodSeconds: 1, volumes: [{name: scratch, emptyDir: {}}], containers: [{name: c, image: cache}]}
status: ${ready}`,
  `apiVersion: v1
kind: Pod
metadata: {name: node-agent-w1, namespace: kube-system, labels: {app: agent}, ownerReferences: ${owner('DaemonSet', 'node-agent', DS_UID)}}
spec: {nodeName: w1, containers: [{name: c, image: agent}]}
status: ${ready}`,
  `apiVersion: v1
kind: Pod
metadata: {name: old-agent-w1, namespace: kube-system, labels: {app: old-agent}, ownerReferences: ${owner('DaemonSet', 'old-agent', GONE_DS_UID)}}
spec: {nodeName: w1, terminationGracePeriodSeconds: 1, containers: [{name: c, image: agent}]}
status: ${ready}`,
  `apiVersion: v1
kind: Pod
metadata: {name: etcd-w1, namespace: kube-system, annotations: {kubernetes.io/config.mirror: 9f0c, kubernetes.io/config.source: file}}
spec: {nodeName: w1, containers: [{name: c, image: etcd}]}
status: ${ready}`,
  `apiVersion: v1
kind: Pod
metadata: {name: handmade, namespace: default}
spec: {nodeName: w1, terminationGracePeriodSeconds: 1, containers: [{name: c, image: busybox}]}
status: ${ready}`,
  `apiVersion: v1
kind: Pod
metadata: {name: report-job-done, namespace: default}
spec: {nodeName: w1, restartPolicy: Never, volumes: [{name: tmp, emptyDir: {}}], containers: [{name: c, image: busybox}]}
status: {phase: Succeeded}`,
  `apiVersion: v1
kind: Pod
metadata: {name: api-7f9d2-ccccc, namespace: shop, labels: {app: api}, ownerReferences: ${owner('ReplicaSet', 'api-7f9d2', API_RS_UID)}}
spec: {nodeName: w3, terminationGracePeriodSeconds: 1, containers: [{name: c, image: api}]}
status: ${ready}`,
  `apiVersion: v1
kind: Pod
metadata: {name: node-agent-w3, namespace: kube-system, labels: {app: agent}, ownerReferences: ${owner('DaemonSet', 'node-agent', DS_UID)}}
spec: {nodeName: w3, containers: [{name: c, image: agent}]}
status: ${ready}`,
  `apiVersion: v1
kind: Pod
metadata: {name: etcd-w3, namespace: kube-system, annotations: {kubernetes.io/config.mirror: 7a1b}}
spec: {nodeName: w3, containers: [{name: c, image: etcd}]}
status: ${ready}`,
  `apiVersion: v1
kind: Pod
metadata: {name: db-5c9b7-00000, namespace: shop, labels: {app: db}, ownerReferences: ${owner('ReplicaSet', 'db-5c9b7', DB_RS_UID)}}
spec: {nodeName: w2, terminationGracePeriodSeconds: 0, containers: [{name: c, image: db}]}
status: ${ready}`,
  `apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web-budget, namespace: shop}
spec: {maxUnavailable: 1, selector: {matchLabels: {app: web}}}`,
  `apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: db-budget, namespace: shop}
spec: {minAvailable: 1, selector: {matchLabels: {app: db}}}`,
].join('\n---\n');

export interface KubectlRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the real kubectl with `env` (its KUBECONFIG and cache), `input` on its standard input. */
export function kubectl(env: NodeJS.ProcessEnv, args: string[], timeoutMs = 60_000, input = ''): Promise<KubectlRun> {
  return new Promise((resolve) => {
    const child = execFile(KUBECTL, args, { env, timeout: timeoutMs }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout: String(stdout), stderr: String(stderr) });
    });
    child.stdin?.end(input);
  });
}

/** kubectl drain's flags for `options`. */
export function drainFlags(options: DrainFlagOptions): string[] {
  return [
    ...(options.force ? ['--force'] : []),
    ...(options.deleteEmptyDirData ? ['--delete-emptydir-data'] : []),
    ...(options.ignoreDaemonSets ? ['--ignore-daemonsets'] : []),
    `--grace-period=${options.gracePeriodSeconds ?? -1}`,
    `--timeout=${options.timeoutSeconds ?? 0}s`,
  ];
}

/**
 * The refused pods by reason, from kubectl's `unable to drain node "x" due to error: ...` line or
 * our refusal message (same shape). kubectl 1.32 doubles "cannot delete" for unmanaged pods.
 */
export function refusedByReason(text: string): Record<string, string[]> {
  const match = /due to error: (.*?)(?:, continuing command\.\.\.)?$/m.exec(text);
  if (!match) {
    return {};
  }
  const body = match[1].replace(/^\[/, '').replace(/\]$/, '');
  const out: Record<string, string[]> = {};
  for (const part of body.split(/(?:^|, )cannot delete (?:cannot delete )?/).filter(Boolean)) {
    const at = part.indexOf(': ');
    out[part.slice(0, at)] = part.slice(at + 2).split(', ').sort();
  }
  return out;
}

/** All eight combinations of force, deleteEmptyDirData and ignoreDaemonSets. */
export const DRAIN_FLAG_COMBOS: DrainFlagOptions[] = [false, true].flatMap((force) =>
  [false, true].flatMap((deleteEmptyDirData) => [false, true].map((ignoreDaemonSets) => ({ force, deleteEmptyDirData, ignoreDaemonSets }))),
);

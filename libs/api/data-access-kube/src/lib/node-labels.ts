import { PatchStrategy, setHeaderOptions, type V1Taint } from '@kubernetes/client-node';
import { KubeApiError, type KubeClient } from './kube-client';

export interface ManagedLabel {
  readonly key: string;
  readonly value: string;
}

export interface ManagedTaint {
  readonly key: string;
  readonly value?: string | null;
  readonly effect: string;
}

/** What this service set on a Node before, and what it wants there now. */
export interface ManagedNodeMarks {
  readonly previous: { readonly labels: readonly ManagedLabel[]; readonly taints: readonly ManagedTaint[] };
  readonly desired: { readonly labels: readonly ManagedLabel[]; readonly taints: readonly ManagedTaint[] };
}

export interface NodeMarksResult {
  readonly node: string;
  /** False when the Node already carried exactly the desired labels and taints. */
  readonly changed: boolean;
}

const CONFLICT_RETRIES = 3;

const sameTaint = (a: ManagedTaint, b: ManagedTaint): boolean => a.key === b.key && a.effect === b.effect;
const taintText = (taint: ManagedTaint): string => `${taint.key}=${taint.value ?? ''}:${taint.effect}`;

/**
 * Brings the labels and taints this service manages on a Node from `previous` to `desired`,
 * leaving every other label and taint (the kubelet's, the cluster's, an operator's by hand) as it
 * is. Labels go as a strategic merge patch (a removed key as null); taints have no merge key, so
 * the Node's whole list is sent with the resourceVersion it was read at, and a 409 (someone else
 * wrote the Node in between) reads it again.
 */
export async function setManagedNodeMarks(client: KubeClient, name: string, marks: ManagedNodeMarks, signal?: AbortSignal): Promise<NodeMarksResult> {
  for (let attempt = 1; ; attempt += 1) {
    const node = await client.call(`read node ${name}`, (options) => client.core.readNode({ name }, options), signal);
    const labels = node.metadata?.labels ?? {};
    const labelPatch: Record<string, string | null> = {};
    for (const label of marks.previous.labels) {
      if (!marks.desired.labels.some((wanted) => wanted.key === label.key) && label.key in labels) {
        labelPatch[label.key] = null;
      }
    }
    for (const label of marks.desired.labels) {
      if (labels[label.key] !== label.value) {
        labelPatch[label.key] = label.value;
      }
    }
    const current: V1Taint[] = node.spec?.taints ?? [];
    const kept = current.filter((taint) => !marks.previous.taints.some((owned) => sameTaint(owned, taint)) && !marks.desired.taints.some((wanted) => sameTaint(wanted, taint)));
    const taints: V1Taint[] = [...kept, ...marks.desired.taints.map((taint) => ({ key: taint.key, effect: taint.effect, ...(taint.value ? { value: taint.value } : {}) }))];
    const taintsChanged = taints.map(taintText).sort().join('\n') !== current.map(taintText).sort().join('\n');
    if (Object.keys(labelPatch).length === 0 && !taintsChanged) {
      return { node: name, changed: false };
    }
    const body = {
      metadata: { resourceVersion: node.metadata?.resourceVersion, ...(Object.keys(labelPatch).length > 0 ? { labels: labelPatch } : {}) },
      ...(taintsChanged ? { spec: { taints } } : {}),
    };
    try {
      await client.call(`label node ${name}`, (options) => client.core.patchNode({ name, body }, setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch, options)), signal);
      return { node: name, changed: true };
    } catch (error) {
      if (!(error instanceof KubeApiError && error.statusCode === 409) || attempt >= CONFLICT_RETRIES) {
        throw error;
      }
    }
  }
}

import protobuf from 'protobufjs';
import type { NodeGroupEntity } from '@ccos/api/data-access-db';
import type { HardwareFacts } from '@ccos/shared/domain';
import { NODE_PROTO, protoDir } from './proto-files';

let nodeType: protobuf.Type | null = null;

/** The v1.Node message (the subset in proto/k8s.io/api/core/v1/node.proto, field numbers of k8s.io/api). */
export function v1NodeType(): protobuf.Type {
  if (!nodeType) {
    const root = new protobuf.Root();
    root.loadSync(`${protoDir()}${NODE_PROTO}`, { keepCase: true });
    nodeType = root.lookupType('k8s.io.api.core.v1.Node');
  }
  return nodeType;
}

/** The CPUs and memory a scale-up of the group brings for sure, and where they come from. */
export interface TemplateCapacity {
  readonly cpuCores: number;
  readonly memoryBytes: number;
  /** `spares`: the smallest of the spares the next scale-ups may take, as their hosts reported; `profile`: the group's profile (no spare told its hardware). */
  readonly source: 'spares' | 'profile';
}

/**
 * What a new node of the group has for sure: any ready spare may be the one a scale-up installs,
 * so the smallest CPUs and memory among them as their hosts reported (MemTotal, what the kubelet
 * reports as capacity); the profile when no spare told its hardware. Spares below the profile are
 * never ready (has-min-cpu-cores, has-min-memory), so this is never less than the profile promises.
 */
export function templateCapacity(group: Pick<NodeGroupEntity, 'profile'>, spares: ReadonlyArray<Pick<HardwareFacts, 'cpus' | 'memoryBytes'> | undefined>): TemplateCapacity {
  const known = spares.filter((hardware): hardware is { cpus: number; memoryBytes: number } => hardware?.cpus != null && hardware.memoryBytes != null);
  if (known.length === 0) {
    return { cpuCores: group.profile.cpuCores, memoryBytes: group.profile.memoryBytes, source: 'profile' };
  }
  return { cpuCores: Math.min(...known.map((hardware) => hardware.cpus)), memoryBytes: Math.min(...known.map((hardware) => hardware.memoryBytes)), source: 'spares' };
}

/**
 * A Node as a new host of the group would register it: the group's labels and taints, the
 * capacity its spares have for sure (allocatable the same: the stand-in reserves nothing), Ready.
 * The autoscaler simulates scheduling pending pods on it to decide whether a scale-up helps.
 * @see https://github.com/kubernetes/autoscaler/blob/master/cluster-autoscaler/FAQ.md#how-does-scale-up-work
 */
export function templateNode(group: NodeGroupEntity, now = new Date(), capacity: TemplateCapacity = templateCapacity(group, [])): Record<string, unknown> {
  const name = `template-node-for-${group.name}`;
  const labels: Record<string, string> = {
    'kubernetes.io/arch': group.profile.arch,
    'kubernetes.io/os': 'linux',
    'kubernetes.io/hostname': name,
    'beta.kubernetes.io/arch': group.profile.arch,
    'beta.kubernetes.io/os': 'linux',
    'node-role.kubernetes.io/worker': '',
  };
  for (const label of group.labels) {
    labels[label.key] = label.value;
  }
  const resources = {
    cpu: { string: String(capacity.cpuCores) },
    memory: { string: String(capacity.memoryBytes) },
    pods: { string: String(group.profile.maxPods) },
    'ephemeral-storage': { string: String(group.profile.ephemeralStorageBytes) },
  };
  const time = { seconds: String(Math.floor(now.getTime() / 1000)), nanos: 0 };
  return {
    metadata: { name, labels, annotations: { 'ccos-scaler.io/node-group': group.name, 'ccos-scaler.io/template-capacity-from': capacity.source } },
    spec: { taints: group.taints.map((taint) => ({ key: taint.key, value: taint.value ?? '', effect: taint.effect })) },
    status: {
      capacity: resources,
      allocatable: resources,
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: time, lastTransitionTime: time, reason: 'KubeletReady', message: 'template node' }],
      nodeInfo: { operatingSystem: 'linux', architecture: group.profile.arch },
    },
  };
}

/** The template protobuf-encoded, as v1.Node#Marshal() writes it (what the autoscaler's Unmarshal reads). */
export function encodeTemplateNode(group: NodeGroupEntity, now = new Date(), capacity?: TemplateCapacity): Buffer {
  const type = v1NodeType();
  return Buffer.from(type.encode(type.fromObject(templateNode(group, now, capacity))).finish());
}

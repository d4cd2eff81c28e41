import protobuf from 'protobufjs';
import type { NodeGroupEntity } from '@ccos/api/data-access-db';
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

/**
 * A Node as a new host of the group would register it: the group's labels and taints, the
 * profile's capacity (allocatable the same: the stand-in reserves nothing), Ready. The
 * autoscaler simulates scheduling pending pods on it to decide whether a scale-up helps.
 * @see https://github.com/kubernetes/autoscaler/blob/master/cluster-autoscaler/FAQ.md#how-does-scale-up-work
 */
export function templateNode(group: NodeGroupEntity, now = new Date()): Record<string, unknown> {
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
    cpu: { string: String(group.profile.cpuCores) },
    memory: { string: String(group.profile.memoryBytes) },
    pods: { string: String(group.profile.maxPods) },
    'ephemeral-storage': { string: String(group.profile.ephemeralStorageBytes) },
  };
  const time = { seconds: String(Math.floor(now.getTime() / 1000)), nanos: 0 };
  return {
    metadata: { name, labels, annotations: { 'ccos-scaler.io/node-group': group.name } },
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
export function encodeTemplateNode(group: NodeGroupEntity, now = new Date()): Buffer {
  const type = v1NodeType();
  return Buffer.from(type.encode(type.fromObject(templateNode(group, now))).finish());
}

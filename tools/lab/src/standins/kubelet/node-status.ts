import { readFileSync, statfsSync } from 'node:fs';
import { cpus, release, totalmem } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { KubeApiError, type Json, type KubeClient } from '../../kube/kube-client';
import { onHost } from '../host-state';
import { error, info } from './klog';
import type { KubeletOptions } from './kubelet-options';

/**
 * Registering the Node and keeping it alive as a kubelet does: create the
 * Node with labels, taints, addresses, capacity and node info; then every
 * heartbeat patch `status` (conditions with fresh heartbeat times) and renew
 * the Lease in kube-node-lease. The Node starts NotReady (network plugin not
 * ready) and turns Ready after a short delay, like a real worker. A Node
 * deleted while the kubelet runs is registered again.
 *
 * @see https://kubernetes.io/docs/concepts/architecture/nodes/#heartbeats
 */
export const KUBELET_VERSION = 'v1.25.4';
const LEASE_DURATION_SECONDS = 40;

/** The Node object a kubelet registers. */
export function nodeObject(options: KubeletOptions, ready: boolean, now = new Date()): Json {
  const labels: Record<string, string> = {
    'beta.kubernetes.io/arch': 'amd64',
    'beta.kubernetes.io/os': 'linux',
    'kubernetes.io/arch': 'amd64',
    'kubernetes.io/hostname': options.nodeName,
    'kubernetes.io/os': 'linux',
    ...options.nodeLabels,
  };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: options.nodeName,
      labels,
      annotations: { 'volumes.kubernetes.io/controller-managed-attach-detach': 'true' },
    },
    spec: {
      ...(options.providerId !== null ? { providerID: options.providerId } : {}),
      ...(options.taints.length > 0 ? { taints: options.taints.map((taint) => ({ ...taint })) } : {}),
    },
    status: nodeStatus(options, ready, now, now),
  };
}

/** The status part: capacity, addresses, node info and the four conditions. */
export function nodeStatus(options: KubeletOptions, ready: boolean, now: Date, readySince: Date): Json {
  const memoryKi = Math.floor(totalmem() / 1024);
  const storageKi = diskKi();
  const cpu = cpus().length;
  const machineId = readHostFile('/etc/machine-id') || '0'.repeat(32);
  const osImage = /^PRETTY_NAME="?([^"\n]*)"?/m.exec(readHostFile('/etc/os-release'))?.[1] ?? 'Linux';
  const heartbeat = now.toISOString().replace(/\.\d+Z$/, 'Z');
  const since = readySince.toISOString().replace(/\.\d+Z$/, 'Z');
  const condition = (type: string, status: string, reason: string, message: string) => ({
    type, status, reason, message, lastHeartbeatTime: heartbeat, lastTransitionTime: since,
  });
  return {
    capacity: {
      cpu: String(cpu),
      memory: `${memoryKi}Ki`,
      pods: String(options.maxPods),
      'ephemeral-storage': `${storageKi}Ki`,
      'hugepages-1Gi': '0',
      'hugepages-2Mi': '0',
    },
    allocatable: {
      cpu: `${Math.max(cpu * 1000 - 500, 100)}m`,
      memory: `${Math.max(memoryKi - 1024 * 1024, 1024)}Ki`,
      pods: String(options.maxPods),
      'ephemeral-storage': String(Math.floor(storageKi * 1024 * 0.9)),
      'hugepages-1Gi': '0',
      'hugepages-2Mi': '0',
    },
    addresses: [
      { type: 'InternalIP', address: options.nodeIp },
      { type: 'Hostname', address: options.nodeName },
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
    nodeInfo: {
      machineID: machineId,
      systemUUID: `${machineId.slice(0, 8)}-${machineId.slice(8, 12)}-${machineId.slice(12, 16)}-${machineId.slice(16, 20)}-${machineId.slice(20, 32)}`,
      bootID: readHostFile('/proc/sys/kernel/random/boot_id'),
      kernelVersion: release(),
      osImage,
      containerRuntimeVersion: 'cri-o://1.25.4-4.rhaos4.12',
      kubeletVersion: KUBELET_VERSION,
      kubeProxyVersion: KUBELET_VERSION,
      operatingSystem: 'linux',
      architecture: 'amd64',
    },
    conditions: [
      condition('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
      condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
      condition('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
      ready
        ? condition('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status')
        : condition('Ready', 'False', 'KubeletNotReady',
          'container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: No CNI configuration file in /etc/kubernetes/cni/net.d/. Has your network provider started?'),
    ],
  };
}

/** Registers the Node and keeps its status and lease fresh until stopped. */
export class NodeStatusReporter {
  private ready = false;
  private readySince = new Date();
  private readonly startedAt = Date.now();
  private nodeUid: string | undefined;

  constructor(private readonly client: KubeClient, private readonly options: KubeletOptions) {}

  /** Registers the Node, retrying until the API server accepts it. */
  async register(signal?: AbortSignal): Promise<void> {
    for (let attempt = 0; ; attempt += 1) {
      signal?.throwIfAborted();
      info('kubelet_node_status.go:70', 'Attempting to register node', { node: this.options.nodeName });
      try {
        const created = await this.client.post<Json>('/api/v1/nodes', nodeObject(this.options, this.ready));
        this.nodeUid = uidOf(created);
        info('kubelet_node_status.go:73', 'Successfully registered node', { node: this.options.nodeName });
        return;
      } catch (cause) {
        if (cause instanceof KubeApiError && cause.status === 409) {
          await this.reconcileExisting();
          info('kubelet_node_status.go:111', 'Node was previously registered', { node: this.options.nodeName });
          return;
        }
        error('kubelet_node_status.go:92', 'Unable to register node with API server', {
          err: cause instanceof Error ? cause.message : String(cause), node: this.options.nodeName,
        });
      }
      await sleep(Math.min(100 * 2 ** attempt, 7000), undefined, { signal });
    }
  }

  /** Heartbeats until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      if (!this.ready && Date.now() - this.startedAt >= this.options.readyDelaySeconds * 1000) {
        this.ready = true;
        this.readySince = new Date();
        info('kubelet_node_status.go:590', 'Recording event message for node', { node: this.options.nodeName, event: 'NodeReady' });
      }
      await this.updateStatus(signal);
      await this.renewLease();
      const wait = this.ready ? this.options.heartbeatSeconds * 1000 : Math.min(1000, this.options.readyDelaySeconds * 1000);
      await sleep(Math.max(wait, 100), undefined, { signal }).catch(() => undefined);
    }
  }

  private async updateStatus(signal: AbortSignal): Promise<void> {
    const path = `/api/v1/nodes/${this.options.nodeName}/status`;
    try {
      await this.client.strategicPatch(path, { status: nodeStatus(this.options, this.ready, new Date(), this.readySince) });
    } catch (cause) {
      if (cause instanceof KubeApiError && cause.status === 404) {
        error('kubelet_node_status.go:487', 'Error updating node status, will retry', {
          err: `error getting node "${this.options.nodeName}": nodes "${this.options.nodeName}" not found`,
        });
        await this.register(signal).catch(() => undefined);
        return;
      }
      error('kubelet_node_status.go:487', 'Error updating node status, will retry', { err: cause instanceof Error ? cause.message : String(cause) });
    }
  }

  private async renewLease(): Promise<void> {
    const name = this.options.nodeName;
    const path = `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${name}`;
    const renewTime = new Date().toISOString().replace('Z', '000Z');
    try {
      const lease = await this.client.get<Json>(path).catch((cause: unknown) => {
        if (cause instanceof KubeApiError && cause.status === 404) {
          return null;
        }
        throw cause;
      });
      const spec = { holderIdentity: name, leaseDurationSeconds: LEASE_DURATION_SECONDS, renewTime };
      if (lease === null) {
        await this.client.post('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: {
            name,
            namespace: 'kube-node-lease',
            ...(this.nodeUid === undefined ? {} : { ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name, uid: this.nodeUid }] }),
          },
          spec,
        });
      } else {
        await this.client.put(path, { ...lease, spec: { ...(lease['spec'] as Json | undefined), ...spec } });
      }
    } catch (cause) {
      error('controller.go:144', 'failed to ensure lease exists, will retry', { err: cause instanceof Error ? cause.message : String(cause) });
    }
  }

  private async reconcileExisting(): Promise<void> {
    const existing = await this.client.get<Json>(`/api/v1/nodes/${this.options.nodeName}`);
    this.nodeUid = uidOf(existing);
    const wanted = nodeObject(this.options, this.ready)['metadata'] as { labels: Record<string, string> };
    await this.client.mergePatch(`/api/v1/nodes/${this.options.nodeName}`, { metadata: { labels: wanted.labels } }).catch(() => undefined);
  }
}

function uidOf(object: Json): string | undefined {
  const uid = (object['metadata'] as { uid?: unknown } | undefined)?.uid;
  return typeof uid === 'string' ? uid : undefined;
}

function readHostFile(path: string): string {
  try {
    return readFileSync(path.startsWith('/proc') ? path : onHost(path), 'utf8').trim();
  } catch {
    return '';
  }
}

function diskKi(): number {
  try {
    const stats = statfsSync(onHost('/var'));
    return Math.floor((stats.blocks * stats.bsize) / 1024);
  } catch {
    return 100 * 1024 * 1024;
  }
}

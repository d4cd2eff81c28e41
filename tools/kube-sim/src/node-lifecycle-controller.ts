import type { KubeSimClock } from './clock';
import { cloneJson, isJsonObject, type JsonObject } from './json-value';
import { kubeTime, type KubeObject } from './kube-object';
import type { ResourceDefinition } from './resource-definition';
import type { ObjectStore } from './store';

const UNREACHABLE_TAINT = 'node.kubernetes.io/unreachable';
const NODE_CONDITIONS = ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'];

function conditionsOf(node: KubeObject): JsonObject[] {
  const list = node.status?.['conditions'];
  return Array.isArray(list) ? list.filter(isJsonObject) : [];
}

function taintsOf(node: KubeObject): JsonObject[] {
  const list = node.spec?.['taints'];
  return Array.isArray(list) ? list.filter(isJsonObject) : [];
}

/**
 * The node lifecycle controller's health check: a Node whose kubelet has heartbeated (Ready condition
 * with lastHeartbeatTime, or a Lease in kube-node-lease) and then stays silent longer than the
 * grace period gets its conditions set to Unknown (NodeStatusUnknown, "Kubelet stopped posting node
 * status.") and the `node.kubernetes.io/unreachable` NoSchedule/NoExecute taints; the taints go
 * again once it reports Ready. Nodes that never heartbeated (plain seeds) are left alone.
 * @see https://kubernetes.io/docs/concepts/architecture/nodes/#node-controller
 */
export class NodeLifecycleController {
  private readonly timer: NodeJS.Timeout;
  private readonly nodes: ResourceDefinition;
  private readonly leases: ResourceDefinition;
  private readonly probes = new Map<string, { signature: string; seenAt: number }>();

  constructor(
    private readonly store: ObjectStore,
    private readonly gracePeriodMs: number,
    private readonly clock: KubeSimClock,
    checkIntervalMs = Math.min(5000, Math.max(100, gracePeriodMs / 4)),
  ) {
    const find = (group: string, resource: string): ResourceDefinition => {
      const def = store.definitions.find((d) => d.group === group && d.resource === resource);
      if (!def) {
        throw new Error(`${resource} is not served`);
      }
      return def;
    };
    this.nodes = find('', 'nodes');
    this.leases = find('coordination.k8s.io', 'leases');
    this.timer = setInterval(() => this.check(), checkIntervalMs);
    this.timer.unref();
  }

  /**
   * When this controller last saw the node's heartbeat (Ready lastHeartbeatTime or Lease renewTime)
   * change — its own observation time, as the real controller's probeTimestamp, so that a kubelet's
   * clock or the seconds precision of lastHeartbeatTime do not matter. Undefined for a node that
   * never heartbeated.
   */
  private lastSeen(node: KubeObject, now: number): number | undefined {
    const ready = conditionsOf(node).find((c) => c['type'] === 'Ready');
    const heartbeat = typeof ready?.['lastHeartbeatTime'] === 'string' ? ready['lastHeartbeatTime'] : undefined;
    const renew = this.store.get(this.leases, 'kube-node-lease', node.metadata.name ?? '')?.spec?.['renewTime'];
    const renewTime = typeof renew === 'string' ? renew : undefined;
    if (heartbeat === undefined && renewTime === undefined) {
      return undefined;
    }
    const name = node.metadata.name ?? '';
    const signature = `${heartbeat ?? ''}|${renewTime ?? ''}`;
    const probe = this.probes.get(name);
    if (!probe || probe.signature !== signature) {
      this.probes.set(name, { signature, seenAt: now });
      return now;
    }
    return probe.seenAt;
  }

  /** One pass over every node, at `now` by the simulator's clock. */
  check(now = this.clock.now()): void {
    for (const node of this.store.list(this.nodes)) {
      const seen = this.lastSeen(node, now);
      const ready = conditionsOf(node).find((c) => c['type'] === 'Ready');
      const tainted = taintsOf(node).some((t) => t['key'] === UNREACHABLE_TAINT);
      if (seen !== undefined && now - seen > this.gracePeriodMs && ready?.['status'] !== 'Unknown') {
        this.markUnknown(node, now);
      } else if (ready?.['status'] === 'True' && tainted) {
        const updated = cloneJson(node);
        updated.spec = { ...updated.spec, taints: taintsOf(node).filter((t) => t['key'] !== UNREACHABLE_TAINT) };
        this.store.replace(this.nodes, updated);
      }
    }
  }

  private markUnknown(node: KubeObject, at: number): void {
    const updated = cloneJson(node);
    const now = kubeTime(at);
    const existing = conditionsOf(node);
    const types = new Set([...NODE_CONDITIONS.filter((t) => t === 'Ready' || existing.some((c) => c['type'] === t)), ...existing.map((c) => String(c['type']))]);
    updated.status = {
      ...updated.status,
      conditions: [...types].map((type) => {
        const old = existing.find((c) => c['type'] === type) ?? {};
        return { ...old, type, status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.', lastTransitionTime: now };
      }),
    };
    const taints = taintsOf(node).filter((t) => t['key'] !== UNREACHABLE_TAINT);
    updated.spec = {
      ...updated.spec,
      taints: [...taints, { key: UNREACHABLE_TAINT, effect: 'NoSchedule', timeAdded: now }, { key: UNREACHABLE_TAINT, effect: 'NoExecute', timeAdded: now }],
    };
    this.store.replace(this.nodes, updated);
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

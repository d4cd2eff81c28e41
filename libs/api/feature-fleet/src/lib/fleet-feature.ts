import type { RolloutStore } from '@ccos/api/data-access-db';
import type { ApprovalGate, AuditSink, EventBus } from '@ccos/api/util-graphql';
import { type HostInspectorOptions, HostInspector } from './host-inspector';
import { HostManifestResolver } from './host-manifest.resolver';
import { AlertmanagerAlerts } from './rollouts/alertmanager';
import { type ApplyRuns, type RolloutClusterAccess, type RolloutObserver, RolloutConductor } from './rollouts/rollout-conductor';
import { RolloutResolver } from './rollouts/rollout.resolver';

export interface FleetFeatureOptions extends HostInspectorOptions {
  readonly rollouts: RolloutStore;
  readonly clusters: RolloutClusterAccess;
  readonly audit: AuditSink;
  readonly events: Pick<EventBus, 'publish'>;
  /** How often every running rollout is looked at again (its window may have opened, a node come back). */
  readonly rolloutIntervalMs: number;
  readonly rolloutObserver?: RolloutObserver;
  /** Alertmanager's URL, for rollouts that pause while named alerts fire. */
  readonly alertmanagerUrl?: string | null;
  /** The agent's apply runs, for UPGRADE and REAPPLY rollouts. */
  readonly applyRuns?: ApplyRuns;
  /** Four-eyes: holds rollouts on clusters that require a second person. */
  readonly approvals?: ApprovalGate;
}

/** Keeping the fleet current: what each host runs, drift, and rolling operations. */
export interface FleetFeature {
  readonly inspector: HostInspector;
  readonly resolver: HostManifestResolver;
  readonly rollouts: RolloutConductor;
  readonly rolloutResolver: RolloutResolver;
  start(): void;
  stop(): void;
}

export function createFleetFeature(options: FleetFeatureOptions): FleetFeature {
  const inspector = new HostInspector(options);
  const rollouts = new RolloutConductor({
    ...options,
    intervalMs: options.rolloutIntervalMs,
    observer: options.rolloutObserver,
    inspections: inspector,
    ...(options.alertmanagerUrl ? { alerts: new AlertmanagerAlerts(options.alertmanagerUrl) } : {}),
  });
  return {
    inspector,
    resolver: new HostManifestResolver(inspector),
    rollouts,
    rolloutResolver: new RolloutResolver(options.rollouts, rollouts),
    start: () => {
      inspector.start();
      rollouts.start();
    },
    stop: () => {
      inspector.stop();
      rollouts.stop();
    },
  };
}

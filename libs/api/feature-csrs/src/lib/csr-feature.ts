import type { Logger } from 'pino';
import type { ClusterConnections, ClusterDirectory } from '@ccos/api/data-access-cluster-connections';
import type { CsrDecisionStore, CsrInventory } from '@ccos/api/data-access-db';
import type { ApprovalGate, AuditSink, EventBus } from '@ccos/api/util-graphql';
import type { Clock } from '@ccos/shared/util-timing';
import { type AutoApproverOptions, CsrAutoApprover, type RunNotices } from './auto-approver';
import { publishCsrChange } from './csr-changes';
import { type CsrDecisionObserver, CsrDecisionLog } from './csr-decision.log';
import { type CsrPolicyOptions, CsrService } from './csr.service';
import { NodeCertificatesService } from './node-certificates.service';

export interface CsrFeatureOptions {
  /** `csr_decisions`. */
  readonly decisions: CsrDecisionStore;
  /** What the service knows of the cluster's nodes, for the policy. */
  readonly inventory: CsrInventory;
  /** Notices the auto-approver raises on install runs. */
  readonly notices: RunNotices;
  readonly clusters: ClusterDirectory;
  /** Each cluster's client and CSR/Node watch cache, shared with the other features. */
  readonly connections: ClusterConnections;
  readonly events: EventBus;
  readonly logger: Logger;
  /** The audit log, for the auto-approver's decisions (operators' are audited by the GraphQL middleware). */
  readonly audit?: AuditSink;
  readonly policy?: CsrPolicyOptions;
  /** The time the policy judges CSRs at; tests share a fake one with the cluster. Default: the process's clock. */
  readonly clock?: Clock;
  /** Four-eyes: holds forced approvals on clusters that require a second person. */
  readonly approvals?: ApprovalGate;
  readonly approver?: AutoApproverOptions;
  /** Told about every decision written to csr_decisions (the metrics). */
  readonly onDecision?: CsrDecisionObserver;
}

/** The certificate feature as the composition root sees it. */
export interface CsrFeature {
  /** For the resolver, and `pendingCsrNamesFor` for the install's START_KUBELET step. */
  readonly service: CsrService;
  readonly autoApprover: CsrAutoApprover;
  /** Certificate expiry per node, for the API and the metrics. */
  readonly nodeCertificates: NodeCertificatesService;
  /** Starts the watches of every registered cluster and the auto-approver. */
  start(): Promise<void>;
  /** Stops the auto-approver (releasing its Leases) and publishing CSR changes; the connections stay open for their owner to close. */
  stop(): Promise<void>;
}

/** Builds the review service and the auto-approver on the cluster connections, and publishes every CSR change they hear. */
export function createCsrFeature(options: CsrFeatureOptions): CsrFeature {
  const { clusters, events, logger } = options;
  const watches = options.connections;
  const stopPublishing = watches.onCsrEvent((clusterId, event) => publishCsrChange(events, clusterId, event));
  const decisions = new CsrDecisionLog(options.decisions, options.onDecision);
  const service = new CsrService(clusters, watches, options.inventory, decisions, events, logger, options.policy, options.clock, options.approvals);
  const autoApprover = new CsrAutoApprover(clusters, watches, service, decisions, events, logger, {
    audit: options.audit,
    notices: options.notices,
    ...options.approver,
  });
  return {
    service,
    autoApprover,
    nodeCertificates: new NodeCertificatesService(clusters, service, logger),
    start: () => autoApprover.start(),
    async stop() {
      await autoApprover.stop();
      stopPublishing();
    },
  };
}

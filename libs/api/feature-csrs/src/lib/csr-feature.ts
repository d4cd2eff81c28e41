import type { Logger } from 'pino';
import type { CsrDecisionStore, CsrInventory, InstallRunNotices } from '@ccos/api/data-access-db';
import type { AuditSink, EventBus } from '@ccos/api/util-graphql';
import { type AutoApproverOptions, CsrAutoApprover } from './auto-approver';
import { type CsrDecisionObserver, CsrDecisionLog } from './csr-decision.log';
import { type CsrPolicyOptions, CsrService } from './csr.service';
import { type ClusterDirectory, CsrWatches, type CsrWatchesOptions } from './csr-watches';
import { NodeCertificatesService } from './node-certificates.service';

export interface CsrFeatureOptions {
  /** `csr_decisions`. */
  readonly decisions: CsrDecisionStore;
  /** What the service knows of the cluster's nodes, for the policy. */
  readonly inventory: CsrInventory;
  /** Notices the auto-approver raises on install runs. */
  readonly notices: InstallRunNotices;
  readonly clusters: ClusterDirectory;
  readonly events: EventBus;
  readonly logger: Logger;
  /** The audit log, for the auto-approver's decisions (operators' are audited by the GraphQL middleware). */
  readonly audit?: AuditSink;
  readonly policy?: CsrPolicyOptions;
  readonly approver?: AutoApproverOptions;
  readonly watches?: CsrWatchesOptions;
  /** Told about every decision written to csr_decisions (the metrics). */
  readonly onDecision?: CsrDecisionObserver;
}

/** The certificate feature as the composition root sees it. */
export interface CsrFeature {
  /** For the resolver, and `pendingCsrNamesFor` for the install's START_KUBELET step. */
  readonly service: CsrService;
  readonly watches: CsrWatches;
  readonly autoApprover: CsrAutoApprover;
  /** Certificate expiry per node, for the API and the metrics. */
  readonly nodeCertificates: NodeCertificatesService;
  /** Starts the watches of every registered cluster and the auto-approver. */
  start(): Promise<void>;
  /** Stops the auto-approver (releasing its Leases), then the watches. */
  stop(): Promise<void>;
}

/** Builds the CSR watch cache, the review service and the auto-approver. */
export function createCsrFeature(options: CsrFeatureOptions): CsrFeature {
  const { clusters, events, logger } = options;
  const watches = new CsrWatches(clusters, events, logger, options.watches);
  const decisions = new CsrDecisionLog(options.decisions, options.onDecision);
  const service = new CsrService(clusters, watches, options.inventory, decisions, events, logger, options.policy);
  const autoApprover = new CsrAutoApprover(clusters, watches, service, decisions, events, logger, {
    audit: options.audit,
    notices: options.notices,
    ...options.approver,
  });
  return {
    service,
    watches,
    autoApprover,
    nodeCertificates: new NodeCertificatesService(clusters, service, logger),
    start: () => autoApprover.start(),
    async stop() {
      await autoApprover.stop();
      await watches.close();
    },
  };
}

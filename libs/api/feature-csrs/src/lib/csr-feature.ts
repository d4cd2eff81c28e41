import type { Logger } from 'pino';
import type { DataSource } from 'typeorm';
import { InstallRunNotices } from '@ccos/api/data-access-db';
import type { AuditSink, EventBus } from '@ccos/api/util-graphql';
import { type AutoApproverOptions, CsrAutoApprover } from './auto-approver';
import { type CsrDecisionObserver, CsrDecisionLog } from './csr-decision.log';
import { CsrInventory } from './csr-inventory';
import { type CsrPolicyOptions, CsrService } from './csr.service';
import { type ClusterDirectory, CsrWatches, type CsrWatchesOptions } from './csr-watches';

export interface CsrFeatureOptions {
  readonly dataSource: DataSource;
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
  /** Starts the watches of every registered cluster and the auto-approver. */
  start(): Promise<void>;
  /** Stops the auto-approver (releasing its Leases), then the watches. */
  stop(): Promise<void>;
}

/** Builds the CSR watch cache, the review service and the auto-approver. */
export function createCsrFeature(options: CsrFeatureOptions): CsrFeature {
  const { dataSource, clusters, events, logger } = options;
  const watches = new CsrWatches(clusters, events, logger, options.watches);
  const decisions = new CsrDecisionLog(dataSource, options.onDecision);
  const service = new CsrService(clusters, watches, new CsrInventory(dataSource), decisions, events, logger, options.policy);
  const autoApprover = new CsrAutoApprover(clusters, watches, service, decisions, events, logger, {
    audit: options.audit,
    notices: new InstallRunNotices(dataSource),
    ...options.approver,
  });
  return {
    service,
    watches,
    autoApprover,
    start: () => autoApprover.start(),
    async stop() {
      await autoApprover.stop();
      await watches.close();
    },
  };
}

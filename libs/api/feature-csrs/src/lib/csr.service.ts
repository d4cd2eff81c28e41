import type { Logger } from 'pino';
import type { ClusterConnections, ClusterDirectory, ClusterWatch } from '@ccos/api/data-access-cluster-connections';
import type { ClusterEntity, CsrInventory, InventoryNode } from '@ccos/api/data-access-db';
import { type CsrDecisionResult, type CsrSummary, type KubeClient, approveCsr, denyCsr, readApiServiceAddresses } from '@ccos/api/data-access-kube';
import { AppError, type ApprovalGate, BadUserInputError, type EventBus, NO_APPROVAL_GATE, NotFoundError, PreconditionError, TOPICS } from '@ccos/api/util-graphql';
import {
  type CsrFacts, type CsrPolicyContext, type CsrVerdict, type Role,
  apiNamesOf, checkForceReason, claimedNodeName, evaluateCsr, forceBlockers, nodeNameOf,
} from '@ccos/shared/domain';
import { bare, message } from '@ccos/shared/messages';
import { type Clock, SystemClock } from '@ccos/shared/util-timing';
import type { CsrChangedMessage } from './csr-changes';
import type { CsrDecisionInput, CsrDecisionLog } from './csr-decision.log';
import { clusterNodeFacts, csrFacts } from './csr-facts';
import type { CsrVerdictType } from './csr-verdict.type';
import { toCsrType, toCsrVerdictType } from './csr.mapper';
import type { CsrType } from './csr.type';

/** Tuning of the policy; the defaults come from the domain. */
export interface CsrPolicyOptions {
  /** From the kubelet start until how long after it CSRs are auto-approved. */
  readonly approvalWindowMs?: number;
  readonly clockSkewMs?: number;
  /** How long the `kubernetes` Service's address read from a cluster is used before it is read again. Default 5 minutes. */
  readonly serviceAddressTtlMs?: number;
}

/** A failed read of the Service's address is tried again after this long (the policy fails closed meanwhile). */
const SERVICE_ADDRESS_RETRY_MS = 5_000;
/** A read of it waits no longer than a read of the watch cache would for an unlisted cluster. */
const SERVICE_ADDRESS_READ_TIMEOUT_MS = 2_000;

/** A cluster's CSRs with everything the policy decides them on, at one moment. */
export interface CsrSnapshot {
  readonly cluster: ClusterEntity;
  readonly watch: ClusterWatch;
  readonly csrs: readonly CsrSummary[];
  readonly inventory: readonly InventoryNode[];
  readonly context: CsrPolicyContext;
  verdictOf(name: string): CsrVerdict;
  /** The inventory node id a verdict names, for csr_decisions. */
  nodeIdOf(verdict: CsrVerdict): string | null;
}

const MAX_DENY_REASON = 1000;

/** A decision to write to a cluster: the condition the CSR gets, and the record beside it. */
export interface CsrDecisionWrite {
  readonly verdict: CsrVerdict;
  readonly decision: 'APPROVED' | 'DENIED';
  /** The condition's reason and message, as the kubelet and `kubectl describe csr` show them. */
  readonly condition: { readonly reason: string; readonly message: string };
  /** Who decided and why, as csr_decisions keeps it. */
  readonly record: Pick<CsrDecisionInput, 'actor' | 'reason' | 'forced' | 'forceReason'>;
  readonly signal?: AbortSignal;
  /** Runs once the write changed the CSR, before it is recorded (the auto-approver's audit entry and counters). */
  readonly beforeRecord?: (csr: CsrSummary) => Promise<void>;
}

/** Who decides: the user name written to the records, and the role that bounds what they may force. */
export interface CsrActor {
  readonly username: string;
  readonly role: Role;
}

/** `force` overrides what the policy lets it (see CSR_CHECK_OVERRIDES), and needs a written reason. */
export interface ApproveOptions {
  readonly force: boolean;
  readonly reason?: string | null;
  /** A second person approved the forced approval already (four-eyes). */
  readonly approved?: boolean;
}

/**
 * CSR review for operators: the cluster's CSRs with the policy's verdict, approval (forced
 * past the policy only on request, and recorded so) and denial with a reason, each written
 * to csr_decisions. Reads come from the watch cache; decisions go to the API server.
 */
export class CsrService {
  /** Per cluster: the `kubernetes` Service's ClusterIPs (null: could not be read) and until when to use them. */
  private readonly serviceAddresses = new Map<string, { readonly addresses: readonly string[] | null; readonly until: number; readonly client: KubeClient }>();

  constructor(
    private readonly clusters: ClusterDirectory,
    private readonly watches: ClusterConnections,
    private readonly inventory: CsrInventory,
    private readonly decisions: CsrDecisionLog,
    private readonly events: EventBus,
    private readonly logger: Logger,
    private readonly options: CsrPolicyOptions = {},
    /** The time verdicts are judged at (approval windows, certificate expiry). */
    private readonly clock: Clock = new SystemClock(),
    /** Four-eyes: holds a forced approval on clusters that require a second person. */
    private readonly approvals: ApprovalGate = NO_APPROVAL_GATE,
  ) {}

  /** Everything the policy needs about a cluster now. */
  async snapshot(clusterId: string): Promise<CsrSnapshot> {
    const cluster = await this.clusters.get(clusterId);
    const [watch, inventory] = await Promise.all([this.watches.watch(clusterId), this.inventory.of(clusterId)]);
    const serviceAddresses = await this.apiServiceAddresses(clusterId, watch.client);
    const csrs = watch.csrs();
    const facts = new Map<string, CsrFacts>(csrs.map((csr) => [csr.name, csrFacts(csr)]));
    const context: CsrPolicyContext = {
      settings: { bootstrapStyle: cluster.bootstrapStyle, approvalWindowMs: this.options.approvalWindowMs, clockSkewMs: this.options.clockSkewMs },
      inventory,
      clusterNodes: watch.nodes().map(clusterNodeFacts),
      csrs: [...facts.values()],
      now: new Date(this.clock.now()),
      clusterAddresses: [...clusterAddressesOf(cluster), ...(serviceAddresses ?? [])],
      serviceAddressUnknown: serviceAddresses === null,
    };
    const verdicts = new Map<string, CsrVerdict>();
    return {
      cluster,
      watch,
      csrs,
      inventory,
      context,
      verdictOf(name) {
        let verdict = verdicts.get(name);
        if (!verdict) {
          const csr = facts.get(name);
          if (!csr) {
            throw new NotFoundError('certificate signing request', name);
          }
          verdict = evaluateCsr(csr, context);
          verdicts.set(name, verdict);
        }
        return verdict;
      },
      nodeIdOf: (verdict) => inventory.find((node) => node.hostname === verdict.node)?.id ?? null,
    };
  }

  /**
   * The `kubernetes` Service's ClusterIPs, read from the cluster and kept for a while; null when
   * they could not be read (the policy then fails closed for certificates naming addresses).
   */
  private async apiServiceAddresses(clusterId: string, client: KubeClient): Promise<readonly string[] | null> {
    const now = this.clock.now();
    const known = this.serviceAddresses.get(clusterId);
    // A new client (the cluster's connection was replaced) may be another API server: read again.
    if (known && known.until > now && known.client === client) {
      return known.addresses;
    }
    let addresses: readonly string[] | null;
    try {
      addresses = await readApiServiceAddresses(client, AbortSignal.timeout(SERVICE_ADDRESS_READ_TIMEOUT_MS));
    } catch (error) {
      this.logger.warn({ err: error, clusterId }, 'could not read the kubernetes Service: serving CSRs naming IP addresses wait');
      addresses = null;
    }
    const ttl = addresses === null ? SERVICE_ADDRESS_RETRY_MS : (this.options.serviceAddressTtlMs ?? 5 * 60_000);
    this.serviceAddresses.set(clusterId, { addresses, until: now + ttl, client });
    return addresses;
  }

  /** The cluster's CSRs (only the pending ones on request), newest first. */
  async list(clusterId: string, pendingOnly: boolean): Promise<CsrType[]> {
    const snapshot = await this.snapshot(clusterId);
    const shown = snapshot.csrs.filter((csr) => !pendingOnly || csr.state === 'Pending');
    const decisions = await this.decisions.of(clusterId, shown.map((csr) => csr.name));
    return shown
      .map((csr) => toCsrType(clusterId, csr, snapshot.verdictOf(csr.name), decisions.get(csr.name) ?? [], snapshot.inventory, snapshot.context.now))
      .sort((a, b) => (b.createdAt?.getTime() ?? 0) - (a.createdAt?.getTime() ?? 0) || a.name.localeCompare(b.name));
  }

  /** One CSR, or null when the cluster has none of that name (any more). */
  async get(clusterId: string, name: string): Promise<CsrType | null> {
    const snapshot = await this.snapshot(clusterId);
    const csr = snapshot.csrs.find((entry) => entry.name === name);
    if (!csr) {
      return null;
    }
    const decisions = await this.decisions.of(clusterId, [name]);
    return toCsrType(clusterId, csr, snapshot.verdictOf(name), decisions.get(name) ?? [], snapshot.inventory, snapshot.context.now);
  }

  /** A dry run: what the policy would do with each CSR pending now. */
  async preview(clusterId: string): Promise<CsrVerdictType[]> {
    const snapshot = await this.snapshot(clusterId);
    return snapshot.csrs
      .filter((csr) => csr.state === 'Pending')
      .sort((a, b) => (a.createdAt ?? '').localeCompare(b.createdAt ?? '') || a.name.localeCompare(b.name))
      .map((csr) => toCsrVerdictType(csr.name, snapshot.verdictOf(csr.name)));
  }

  /**
   * Approves a CSR for an operator. When the policy would not approve it, an ADMIN may force
   * it with a written reason, past the checks the policy lets force override and no others;
   * the decision then says it was forced, why, and what the policy objected to.
   */
  async approve(clusterId: string, name: string, actor: CsrActor, options: ApproveOptions): Promise<CsrType> {
    const { force } = options;
    const why = options.reason?.trim() ?? '';
    if (force && actor.role !== 'ADMIN') {
      throw new AppError('FORBIDDEN', message('csr.forceNeedsAdmin', { held: actor.role }), { requiredRole: 'ADMIN' });
    }
    if (force) {
      const problem = checkForceReason(why);
      if (problem) {
        throw new BadUserInputError('reason', problem);
      }
    } else if (options.reason != null) {
      throw new BadUserInputError('reason', message('csr.reasonWithoutForce'));
    }
    const snapshot = await this.snapshot(clusterId);
    const csr = this.pendingOrThrow(snapshot, name, 'approve');
    if (!csr) {
      return this.mustGet(clusterId, name);
    }
    const verdict = snapshot.verdictOf(name);
    const approvable = verdict.decision === 'APPROVE';
    const failed = verdict.checks.filter((check) => !check.passed);
    const blockers = forceBlockers(verdict);
    if (!approvable && !force) {
      const hint = blockers.length > 0 ? message('csr.policyRefuses.cannotOverride', { checks: blockers.map((check) => check.name).join(', ') }) : message('csr.policyRefuses.adminMayForce');
      throw new PreconditionError(message('csr.policyRefuses', { name, reason: { code: verdict.reasonCode, params: verdict.reasonParams }, hint: bare(hint) }), {
        failedChecks: failed.map((check) => check.name),
        blockingChecks: blockers.map((check) => check.name),
      });
    }
    if (!approvable && blockers.length > 0) {
      throw new PreconditionError(
        message('csr.forceBlocked', {
          name,
          blockers: blockers.map((check) => bare(message('csr.forceBlocked.check', { check: check.name, detail: { code: check.detailCode, params: check.detailParams } }))),
          count: blockers.length,
        }),
        { failedChecks: failed.map((check) => check.name), blockingChecks: blockers.map((check) => check.name) },
      );
    }
    const forced = !approvable;
    if (forced && !options.approved) {
      await this.approvals.gate({
        clusterId,
        action: 'FORCE_APPROVE_CSR',
        target: name,
        params: { clusterId, name, reason: why },
        preview: async () => ({ csr: name, requester: csr.username, signerName: csr.signerName, reason: { code: verdict.reasonCode, params: verdict.reasonParams }, failedChecks: failed.map((check) => check.name) }),
        actor: actor.username,
      });
    }
    const policySaid = { code: verdict.reasonCode, params: verdict.reasonParams };
    const result = await this.writeDecision(snapshot, name, {
      verdict,
      decision: 'APPROVED',
      condition: {
        reason: forced ? 'CcosScalerForcedApprove' : 'CcosScalerApprove',
        message: forced ? `Approved by ${actor.username} through ccos-scaler, overriding the CSR policy: ${why}` : `Approved by ${actor.username} through ccos-scaler.`,
      },
      record: {
        actor: actor.username,
        reason: forced ? message('csr.decision.forced', { actor: actor.username, why, reason: policySaid }) : message('csr.decision.approved', { actor: actor.username, reason: policySaid }),
        forced,
        forceReason: force ? why : null,
      },
    });
    if (!result.ok) {
      throw new PreconditionError(result.coded);
    }
    if (result.changed) {
      this.logger.info({ clusterId, csr: name, actor: actor.username, forced, overridden: forced ? failed.map((check) => check.name) : [] }, 'CSR approved');
    }
    return this.viewOf(clusterId, result.csr, snapshot);
  }

  /** Denies a CSR for an operator, with the reason the kubelet (and the audit) will see. */
  async deny(clusterId: string, name: string, actor: string, reason: string): Promise<CsrType> {
    const why = reason.trim();
    if (why.length === 0) {
      throw new BadUserInputError('reason', message('csr.denyReasonEmpty'));
    }
    if (why.length > MAX_DENY_REASON) {
      throw new BadUserInputError('reason', message('validation.hostnameTooLong', { length: why.length, max: MAX_DENY_REASON }));
    }
    const snapshot = await this.snapshot(clusterId);
    const csr = this.pendingOrThrow(snapshot, name, 'deny');
    if (!csr) {
      return this.mustGet(clusterId, name);
    }
    const result = await this.writeDecision(snapshot, name, {
      verdict: snapshot.verdictOf(name),
      decision: 'DENIED',
      condition: { reason: 'CcosScalerDeny', message: `Denied by ${actor} through ccos-scaler: ${why}` },
      record: { actor, reason: why },
    });
    if (!result.ok) {
      throw new PreconditionError(result.coded);
    }
    if (result.changed) {
      this.logger.info({ clusterId, csr: name, actor }, 'CSR denied');
    }
    return this.viewOf(clusterId, result.csr, snapshot);
  }

  /**
   * Names of a node's CSRs waiting for approval (client and serving), oldest first, from
   * the watch cache: what the START_KUBELET step shows while it waits. Never throws: an
   * unreachable cluster gives an empty list (and a warning in the log).
   */
  async pendingCsrNamesFor(clusterId: string, nodeName: string): Promise<string[]> {
    try {
      const watch = await this.watches.watch(clusterId);
      return watch
        .csrs()
        .filter((csr) => csr.state === 'Pending')
        .filter((csr) => {
          const claimed = claimedNodeName(csrFacts(csr));
          return claimed === nodeName || nodeNameOf(csr.username ?? '') === nodeName;
        })
        .sort((a, b) => (a.createdAt ?? '').localeCompare(b.createdAt ?? '') || a.name.localeCompare(b.name))
        .map((csr) => csr.name);
    } catch (error) {
      this.logger.warn({ err: error, clusterId, nodeName }, 'could not read pending CSRs');
      return [];
    }
  }

  /**
   * The one place a decision reaches a cluster, whoever decides (an operator's approve or deny, the
   * auto-approver, a removal's DENY_CSRS phase, host cleanup): writes the Approved or Denied
   * condition and, when that changed the CSR, records the decision and announces it. A refusal of
   * the cluster (already decided the other way, gone, forbidden) is the result, not an exception.
   */
  async writeDecision(snapshot: CsrSnapshot, name: string, write: CsrDecisionWrite): Promise<CsrDecisionResult> {
    const toCluster = write.decision === 'APPROVED' ? approveCsr : denyCsr;
    const result = await toCluster(snapshot.watch.client, name, { ...write.condition, signal: write.signal, known: snapshot.watch.csr(name), requests: snapshot.watch.csrRequests });
    if (result.ok && result.changed) {
      await write.beforeRecord?.(result.csr);
      await this.decisions.record({ clusterId: snapshot.cluster.id, csrName: name, nodeId: snapshot.nodeIdOf(write.verdict), decision: write.decision, checks: write.verdict.checks, ...write.record });
      this.announce(snapshot.cluster.id, name, result.csr.resourceVersion);
    }
    return result;
  }

  /** Tells csrChanged subscribers that a decision was recorded (the CSR's own change comes from the watch). */
  announce(clusterId: string, name: string, resourceVersion: string): void {
    const change: CsrChangedMessage = { clusterId, name, kind: 'MODIFIED', resourceVersion: `${resourceVersion}+decision` };
    this.events.publish(TOPICS.CSR_CHANGED, clusterId, change);
  }

  /** The pending CSR; null when it already carries the decision asked for; throws otherwise. */
  private pendingOrThrow(snapshot: CsrSnapshot, name: string, verb: 'approve' | 'deny'): CsrSummary | null {
    const csr = snapshot.csrs.find((entry) => entry.name === name);
    if (!csr) {
      throw new NotFoundError('certificate signing request', name);
    }
    const wanted = verb === 'approve' ? ['Approved', 'Issued'] : ['Denied'];
    if (wanted.includes(csr.state)) {
      return null;
    }
    if (csr.state !== 'Pending') {
      throw new PreconditionError(message('csr.alreadyDecided', { name, state: csr.state.toLowerCase(), verb }), { status: csr.state });
    }
    return csr;
  }

  private async mustGet(clusterId: string, name: string): Promise<CsrType> {
    const view = await this.get(clusterId, name);
    if (!view) {
      throw new NotFoundError('certificate signing request', name);
    }
    return view;
  }

  /** The view of a CSR just written, judged against the snapshot it was decided on. */
  private async viewOf(clusterId: string, csr: CsrSummary, snapshot: CsrSnapshot): Promise<CsrType> {
    const decisions = await this.decisions.of(clusterId, [csr.name]);
    const context = { ...snapshot.context, csrs: snapshot.context.csrs.map((entry) => (entry.name === csr.name ? csrFacts(csr) : entry)) };
    const verdict = evaluateCsr(csrFacts(csr), context);
    return toCsrType(clusterId, csr, verdict, decisions.get(csr.name) ?? [], snapshot.inventory, new Date(this.clock.now()));
  }
}

/**
 * The cluster's own addresses as registered, which no node's serving certificate may name: the VIP,
 * the API server's host and, when that host is OpenShift's `api.<cluster domain>` (or `api-int.`),
 * both API names of that domain. The `kubernetes` Service's address is read from the cluster.
 */
export function clusterAddressesOf(cluster: Pick<ClusterEntity, 'vip' | 'apiServerUrl'>): string[] {
  const addresses = [cluster.vip];
  try {
    const host = new URL(cluster.apiServerUrl).hostname.replace(/^\[(.*)\]$/, '$1');
    addresses.push(host, ...apiNamesOf(host));
  } catch {
    // A URL that does not parse was refused at registration.
  }
  return [...new Set(addresses.filter((address) => address.length > 0))];
}

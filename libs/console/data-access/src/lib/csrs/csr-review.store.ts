import { DestroyRef, Injectable, computed, inject, signal } from '@angular/core';
import { Apollo } from 'apollo-angular';
import { firstValueFrom } from 'rxjs';
import { I18n } from '@ccos/console/util-i18n';
import { ApproveCsrDocument, CsrChangedDocument, type CsrChangedSubscription, CsrPolicyPreviewDocument, CsrsDocument, type CsrsQuery, DenyCsrDocument } from '@ccos/shared/api-schema';
import { liveQuery } from '../apollo/live-query';
import { liveSubscription } from '../apollo/live-subscription';
import { type ApiProblem, type Outcome, fieldProblems, problemsOf } from '../errors/api-problem';
import { fieldProblemText } from '../errors/error-reporter';

/** A CSR with what it claims, its decisions and the policy's verdict (the CsrFields fragment). */
export type Csr = CsrsQuery['csrs'][number];
export type CsrVerdictView = Csr['verdict'];

/** Several CSR changes come at once (a kubelet's client CSR approved, issued, its serving CSR created): ask for the preview once. */
const PREVIEW_SETTLE_MS = 300;

/**
 * Certificate handling for one cluster (the seed's 证书处理): its CSRs, newest first, kept
 * current by `csrChanged` (no polling); what the auto-approve policy would do now, asked
 * again after each burst of changes; approving (forced when the policy objects) and denying.
 * Provide it in the page; call {@link select} with the route's cluster id.
 */
@Injectable()
export class CsrReviewStore {
  private readonly apollo = inject(Apollo);
  private readonly i18n = inject(I18n);
  private readonly csrQuery = liveQuery(CsrsDocument);
  private readonly previewQuery = liveQuery(CsrPolicyPreviewDocument);
  private readonly changes = liveSubscription(CsrChangedDocument);
  private clusterId: string | null = null;
  private previewTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly deciding = signal<ReadonlySet<string>>(new Set());
  private readonly denyProblems = signal<readonly ApiProblem[]>([]);

  readonly csrs = computed(() => this.csrQuery.data()?.csrs ?? []);
  readonly pending = computed(() => this.csrs().filter((csr) => csr.status === 'PENDING'));
  /** Decided ones (approved, denied, failed), newest first. */
  readonly decided = computed(() => this.csrs().filter((csr) => csr.status !== 'PENDING'));
  readonly loading = computed(() => this.csrQuery.loading() && this.csrQuery.data() === undefined);
  readonly problems = this.csrQuery.problems;
  readonly preview = computed(() => this.previewQuery.data()?.csrPolicyPreview ?? []);
  readonly previewLoading = computed(() => this.previewQuery.loading() && this.previewQuery.data() === undefined);
  readonly previewProblems = this.previewQuery.problems;
  readonly live = this.changes.live;
  readonly liveProblems = this.changes.problems;
  /** The API's field problems of the last denial (`reason`). */
  readonly denyFieldErrors = computed(() => fieldProblems(this.denyProblems(), fieldProblemText(this.i18n)));

  constructor() {
    inject(DestroyRef).onDestroy(() => clearTimeout(this.previewTimer));
  }

  select(clusterId: string): void {
    if (clusterId === this.clusterId) {
      return;
    }
    this.clusterId = clusterId;
    this.csrQuery.watch({ clusterId, pendingOnly: false });
    this.previewQuery.watch({ clusterId });
    this.changes.start(
      { clusterId },
      {
        next: ({ csrChanged }) => {
          this.apply(clusterId, csrChanged);
          this.refreshPreviewSoon();
        },
        reconnected: () => {
          this.csrQuery.refetch();
          this.previewQuery.refetch();
        },
      },
    );
  }

  reload(): void {
    this.csrQuery.refetch();
    this.previewQuery.refetch();
    this.changes.restart();
  }

  reloadPreview(): void {
    this.previewQuery.refetch();
  }

  isDeciding(name: string): boolean {
    return this.deciding().has(name);
  }

  clearDenyProblems(): void {
    this.denyProblems.set([]);
  }

  /**
   * Approves a pending CSR; `force` (ADMIN, with the written `reason`) overrides a policy that
   * would not approve it, as far as the policy lets force go, and is recorded as forced.
   */
  approve(name: string, force: boolean, reason: string | null = null): Promise<Outcome<Csr>> {
    return this.decide(name, 'toast', async (clusterId) => {
      const result = await firstValueFrom(this.apollo.mutate({ mutation: ApproveCsrDocument, variables: { clusterId, name, force, reason: force ? reason : null } }));
      return { value: result.data?.approveCsr, error: result.error };
    });
  }

  /** Denies a pending CSR with the reason the kubelet and the audit log will see. */
  deny(name: string, reason: string): Promise<Outcome<Csr>> {
    this.denyProblems.set([]);
    return this.decide(name, 'fields', async (clusterId) => {
      const result = await firstValueFrom(this.apollo.mutate({ mutation: DenyCsrDocument, variables: { clusterId, name, reason }, context: { errorDisplay: 'fields' } }));
      return { value: result.data?.denyCsr, error: result.error };
    });
  }

  private async decide(
    name: string,
    display: 'toast' | 'fields',
    send: (clusterId: string) => Promise<{ readonly value: Csr | null | undefined; readonly error: unknown }>,
  ): Promise<Outcome<Csr>> {
    const clusterId = this.clusterId;
    if (!clusterId) {
      return { ok: false, problems: [{ code: 'UNKNOWN', message: 'no cluster selected', field: null }] };
    }
    this.deciding.update((names) => new Set(names).add(name));
    try {
      const { value, error } = await send(clusterId);
      if (value) {
        this.refreshPreviewSoon();
        return { ok: true, value };
      }
      return this.failed(display, problemsOf(error));
    } catch (error) {
      return this.failed(display, problemsOf(error));
    } finally {
      this.deciding.update((names) => {
        const next = new Set(names);
        next.delete(name);
        return next;
      });
    }
  }

  private failed(display: 'toast' | 'fields', problems: readonly ApiProblem[]): Outcome<Csr> {
    if (display === 'fields') {
      this.denyProblems.set(problems);
    }
    return { ok: false, problems };
  }

  /** The CSR itself is updated in the cache by Apollo (keyed by cluster and name); the list gains new ones and loses deleted ones. */
  private apply(clusterId: string, change: CsrChangedSubscription['csrChanged']): void {
    this.apollo.client.cache.updateQuery({ query: CsrsDocument, variables: { clusterId, pendingOnly: false } }, (existing) => {
      if (!existing) {
        return existing;
      }
      const csrs = withCsrChange(existing.csrs, change);
      return csrs === existing.csrs ? existing : { csrs };
    });
  }

  private refreshPreviewSoon(): void {
    clearTimeout(this.previewTimer);
    this.previewTimer = setTimeout(() => this.previewQuery.refetch(), PREVIEW_SETTLE_MS);
  }
}

/**
 * The cluster's CSR list after a `csrChanged` message: a new CSR joins it newest first, a deleted
 * one leaves it; a known one stays where it is (Apollo has updated its fields). The same array
 * when nothing changes.
 */
export function withCsrChange(csrs: Csr[], change: CsrChangedSubscription['csrChanged']): Csr[] {
  const known = csrs.some((csr) => csr.name === change.name);
  if (change.kind === 'DELETED' || !change.csr) {
    return known ? csrs.filter((csr) => csr.name !== change.name) : csrs;
  }
  return known ? csrs : [change.csr, ...csrs].sort(newestFirst);
}

function newestFirst(a: Csr, b: Csr): number {
  return (b.createdAt ?? '').localeCompare(a.createdAt ?? '') || a.name.localeCompare(b.name);
}

import { Injectable, computed, inject, signal } from '@angular/core';
import { Apollo } from 'apollo-angular';
import { firstValueFrom } from 'rxjs';
import { AuditLogDocument, type AuditLogFilter, type AuditLogQuery } from '@ccos/shared/api-schema';
import { type ApiProblem, problemsOf } from '../errors/api-problem';

export type AuditEntry = AuditLogQuery['auditLog']['entries'][number];

const PAGE_SIZE = 50;

/**
 * The audit trail (ADMIN), newest first: a search with a filter, then older pages on demand.
 * Read from the server each time (the trail only grows, and nothing else shows it), so the
 * Apollo cache is bypassed. Provide it in the audit page.
 */
@Injectable()
export class AuditLogStore {
  private readonly apollo = inject(Apollo);
  private readonly state = signal<{ readonly entries: readonly AuditEntry[]; readonly hasMore: boolean; readonly loading: boolean; readonly problems: readonly ApiProblem[] }>({
    entries: [],
    hasMore: false,
    loading: false,
    problems: [],
  });
  private filter: AuditLogFilter = {};
  /** Answers to an older search are dropped. */
  private asked = 0;

  readonly entries = computed(() => this.state().entries);
  readonly hasMore = computed(() => this.state().hasMore);
  readonly loading = computed(() => this.state().loading);
  readonly problems = computed(() => this.state().problems);

  /** Starts over with this filter (empty fields match everything). */
  search(filter: AuditLogFilter): Promise<void> {
    this.filter = Object.fromEntries(Object.entries(filter).filter(([, value]) => value !== null && value !== undefined && value !== '')) as AuditLogFilter;
    this.state.set({ entries: [], hasMore: false, loading: true, problems: [] });
    return this.fetch(null);
  }

  reload(): Promise<void> {
    return this.search(this.filter);
  }

  /** The next older page, appended. */
  loadMore(): Promise<void> {
    const last = this.state().entries.at(-1);
    if (!last || this.state().loading) {
      return Promise.resolve();
    }
    this.state.update((previous) => ({ ...previous, loading: true, problems: [] }));
    return this.fetch(last.id);
  }

  private async fetch(before: string | null): Promise<void> {
    const question = ++this.asked;
    try {
      const result = await firstValueFrom(
        this.apollo.query({ query: AuditLogDocument, variables: { filter: this.filter, first: PAGE_SIZE, before }, fetchPolicy: 'network-only', context: { errorDisplay: 'caller' } }),
      );
      if (question !== this.asked) {
        return;
      }
      const page = result.data?.auditLog;
      this.state.update((previous) => ({
        entries: page ? [...previous.entries, ...page.entries] : previous.entries,
        hasMore: page?.hasMore ?? previous.hasMore,
        loading: false,
        problems: result.error ? problemsOf(result.error) : [],
      }));
    } catch (error) {
      if (question === this.asked) {
        this.state.update((previous) => ({ ...previous, loading: false, problems: problemsOf(error) }));
      }
    }
  }
}

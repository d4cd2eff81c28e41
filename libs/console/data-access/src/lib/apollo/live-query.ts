import { DestroyRef, computed, inject, signal } from '@angular/core';
import type { OperationVariables, TypedDocumentNode } from '@apollo/client';
import { Apollo, type QueryRef } from 'apollo-angular';
import type { Subscription } from 'rxjs';
import { type ApiProblem, problemsOf } from '../errors/api-problem';

interface QueryState<TData> {
  readonly data: TData | undefined;
  readonly loading: boolean;
  readonly problems: readonly ApiProblem[];
}

/**
 * A watched query as signals: the data stays current with the Apollo cache (so a
 * mutation result or, later, a subscription updates every page showing it). Stops
 * when the injector that created it (a page's store) is destroyed.
 */
export class LiveQuery<TData, TVariables extends OperationVariables> {
  private readonly state = signal<QueryState<TData>>({ data: undefined, loading: false, problems: [] });
  private ref: QueryRef<TData, TVariables> | null = null;
  private subscription: Subscription | null = null;

  readonly data = computed(() => this.state().data);
  readonly loading = computed(() => this.state().loading);
  readonly problems = computed(() => this.state().problems);

  constructor(
    private readonly apollo: Apollo,
    private readonly document: TypedDocumentNode<TData, TVariables>,
    destroyRef: DestroyRef,
  ) {
    destroyRef.onDestroy(() => this.stop());
  }

  /** Starts watching with these variables (forgetting the data of previous ones). */
  watch(variables: TVariables): void {
    this.stop();
    this.state.set({ data: undefined, loading: true, problems: [] });
    // The page shows a failed query as an error state with a retry button, so no toast.
    // No deduplication: a refetch asked for after a change must reach the server after it. Joined
    // to a request already in flight (sent a moment before the change), it would bring back the
    // state before, and nothing later would correct it (seen: a host key refusal shown as ADDING).
    const ref = this.apollo.watchQuery<TData, TVariables>({
      query: this.document,
      variables,
      notifyOnNetworkStatusChange: true,
      context: { errorDisplay: 'caller', queryDeduplication: false },
    });
    this.ref = ref;
    this.subscription = ref.valueChanges.subscribe({
      next: (result) => {
        const complete = result.dataState === 'complete' ? (result.data as TData) : undefined;
        this.state.update((previous) => ({
          data: complete ?? (result.error ? undefined : previous.data),
          loading: result.loading,
          problems: result.error ? problemsOf(result.error) : [],
        }));
      },
      error: (error: unknown) => this.state.update((previous) => ({ ...previous, loading: false, problems: problemsOf(error) })),
    });
  }

  /** Asks the server again; the outcome arrives through the signals. */
  refetch(): void {
    if (!this.ref) {
      return;
    }
    this.state.update((previous) => ({ ...previous, loading: true, problems: [] }));
    this.ref.refetch().catch(() => undefined);
  }

  private stop(): void {
    this.subscription?.unsubscribe();
    this.subscription = null;
    this.ref = null;
  }
}

/** A {@link LiveQuery} bound to the current injector (call it in a store's field initializer). */
export function liveQuery<TData, TVariables extends OperationVariables>(document: TypedDocumentNode<TData, TVariables>): LiveQuery<TData, TVariables> {
  return new LiveQuery(inject(Apollo), document, inject(DestroyRef));
}

import { DestroyRef, computed, inject, signal } from '@angular/core';
import type { OperationVariables, TypedDocumentNode } from '@apollo/client';
import { Apollo } from 'apollo-angular';
import type { Subscription } from 'rxjs';
import { type ApiProblem, problemsOf } from '../errors/api-problem';
import { LiveConnection, onReconnect } from './live-connection';

export interface LiveSubscriptionHandlers<TData> {
  /** Each message, in order. Apollo has already written normalised objects to the cache. */
  next(data: TData): void;
  /** The socket came back after a drop: messages may have been missed, so reload. */
  reconnected?(): void;
}

/**
 * A GraphQL subscription bound to a store's lifetime: one at a time (starting again with
 * other variables ends the previous one), ended when the store is destroyed. `live` says
 * whether updates are flowing now, so a page can say so instead of going quietly stale.
 * A failed subscription is reported by the page, not as a toast.
 */
export class LiveSubscription<TData, TVariables extends OperationVariables> {
  private readonly started = signal(false);
  private readonly failure = signal<readonly ApiProblem[]>([]);
  private subscription: Subscription | null = null;
  private stopReconnect: (() => void) | null = null;
  private key: string | null = null;
  private lastStart: { variables: TVariables; handlers: LiveSubscriptionHandlers<TData> } | null = null;

  /** Subscribed, no error, and the socket is up. */
  readonly live = computed(() => this.started() && this.failure().length === 0 && this.connection.connected());
  readonly problems = this.failure.asReadonly();

  constructor(
    private readonly apollo: Apollo,
    private readonly connection: LiveConnection,
    private readonly document: TypedDocumentNode<TData, TVariables>,
    destroyRef: DestroyRef,
  ) {
    destroyRef.onDestroy(() => this.stop());
  }

  /** Subscribes with these variables; does nothing if already subscribed with the same ones. */
  start(variables: TVariables, handlers: LiveSubscriptionHandlers<TData>): void {
    const key = JSON.stringify(variables);
    if (key === this.key && this.subscription) {
      return;
    }
    this.stop();
    this.key = key;
    this.lastStart = { variables, handlers };
    this.failure.set([]);
    this.started.set(true);
    this.subscription = this.apollo
      .subscribe<TData, TVariables>({ query: this.document, variables, context: { errorDisplay: 'caller' } })
      .subscribe({
        next: (result) => {
          if (result.error) {
            this.failure.set(problemsOf(result.error));
            return;
          }
          if (result.data) {
            this.failure.set([]);
            handlers.next(result.data as TData);
          }
        },
        error: (error: unknown) => {
          this.failure.set(problemsOf(error));
          this.subscription = null;
        },
        complete: () => {
          this.subscription = null;
        },
      });
    if (handlers.reconnected) {
      const reconnected = handlers.reconnected;
      this.stopReconnect = onReconnect(this.connection, () => reconnected());
    }
  }

  /** Subscribes again after a failure, with the last variables. */
  restart(): void {
    const last = this.lastStart;
    if (last) {
      this.stop();
      this.start(last.variables, last.handlers);
    }
  }

  stop(): void {
    this.subscription?.unsubscribe();
    this.subscription = null;
    this.stopReconnect?.();
    this.stopReconnect = null;
    this.key = null;
    this.started.set(false);
  }
}

/** A {@link LiveSubscription} bound to the current injector (call it in a store's field initializer). */
export function liveSubscription<TData, TVariables extends OperationVariables>(document: TypedDocumentNode<TData, TVariables>): LiveSubscription<TData, TVariables> {
  return new LiveSubscription(inject(Apollo), inject(LiveConnection), document, inject(DestroyRef));
}

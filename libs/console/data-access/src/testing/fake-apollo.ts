import { signal } from '@angular/core';
import type { DocumentNode } from 'graphql';
import { Subject } from 'rxjs';
import type { LiveConnection } from '../lib/apollo/live-connection';

/** The operation's name as written in libs/shared/api-schema (`NodeList`, `NodeChanged` …). */
export function operationNameOf(document: DocumentNode): string {
  for (const definition of document.definitions) {
    if (definition.kind === 'OperationDefinition' && definition.name) {
      return definition.name.value;
    }
  }
  return '(anonymous)';
}

/** One request a store sent; the test answers it when it likes, so it can also answer out of order. */
export interface FakeRequest {
  readonly name: string;
  readonly variables: Record<string, unknown>;
  readonly context: Record<string, unknown> | undefined;
  readonly fetchPolicy: string | undefined;
  /** The server's answer (`{ data }` or `{ error }`, as Apollo 4 hands it on). */
  answer(result: { readonly data?: unknown; readonly error?: unknown }): void;
  /** The request failed outright (no network). */
  fail(error: unknown): void;
}

/** An open subscription: the test sends its messages. */
export interface FakeSubscription {
  readonly name: string;
  readonly variables: Record<string, unknown>;
  readonly closed: () => boolean;
  send(data: unknown): void;
  fail(error: unknown): void;
}

interface Options {
  readonly query?: DocumentNode;
  readonly mutation?: DocumentNode;
  readonly variables?: Record<string, unknown>;
  readonly context?: Record<string, unknown>;
  readonly fetchPolicy?: string;
}

/**
 * Stands in for apollo-angular's `Apollo` in store specs: records every query, mutation,
 * watched query and subscription a store starts, and lets the test answer each one (the server
 * side), in any order. Watched queries emit what the test answers, as Apollo's cache would.
 */
export class FakeApollo {
  readonly requests: FakeRequest[] = [];
  readonly subscriptions: FakeSubscription[] = [];
  /** How often a store emptied Apollo's cache (`client.clearStore()`), as after a change of user. */
  cacheClears = 0;
  readonly client = {
    clearStore: async (): Promise<unknown[]> => {
      this.cacheClears += 1;
      return [];
    },
  };

  /** The requests named `name` not yet answered, oldest first. */
  pending(name: string): FakeRequest[] {
    return this.requests.filter((request) => request.name === name && !answered.has(request));
  }

  /** Answers the oldest unanswered request named `name`; fails the test when there is none. */
  answer(name: string, result: { readonly data?: unknown; readonly error?: unknown }): FakeRequest {
    const request = this.pending(name)[0];
    if (!request) {
      throw new Error(`no ${name} request is waiting for an answer (sent: ${this.requests.map((sent) => sent.name).join(', ') || 'none'})`);
    }
    request.answer(result);
    return request;
  }

  /** The open subscription named `name` (the latest one). */
  subscription(name: string): FakeSubscription {
    const found = this.subscriptions.filter((subscription) => subscription.name === name && !subscription.closed()).at(-1);
    if (!found) {
      throw new Error(`no open ${name} subscription`);
    }
    return found;
  }

  query(options: Options) {
    return this.oneAnswer(options.query, options);
  }

  mutate(options: Options) {
    return this.oneAnswer(options.mutation, options);
  }

  watchQuery(options: Options) {
    const values = new Subject<unknown>();
    const name = operationNameOf(required(options.query));
    const ask = () => {
      values.next({ loading: true, dataState: 'empty', data: undefined });
      return new Promise<void>((resolve) => {
        this.record(name, options, (result) => {
          values.next({ loading: false, dataState: result.data ? 'complete' : 'empty', data: result.data, error: result.error });
          resolve();
        }, (error) => {
          values.error(error);
          resolve();
        });
      });
    };
    return {
      valueChanges: { subscribe: (observer: Parameters<Subject<unknown>['subscribe']>[0]) => {
        const subscription = values.subscribe(observer);
        void ask();
        return subscription;
      } },
      refetch: () => ask(),
    };
  }

  subscribe(options: Options) {
    const messages = new Subject<unknown>();
    let closed = false;
    const name = operationNameOf(required(options.query));
    return {
      subscribe: (observer: Parameters<Subject<unknown>['subscribe']>[0]) => {
        const subscription = messages.subscribe(observer);
        this.subscriptions.push({
          name,
          variables: options.variables ?? {},
          closed: () => closed,
          send: (data) => messages.next({ data }),
          fail: (error) => messages.error(error),
        });
        subscription.add(() => {
          closed = true;
        });
        return subscription;
      },
    };
  }

  private oneAnswer(document: DocumentNode | undefined, options: Options) {
    const answers = new Subject<unknown>();
    this.record(operationNameOf(required(document)), options, (result) => {
      answers.next(result);
      answers.complete();
    }, (error) => answers.error(error));
    return answers.asObservable();
  }

  private record(name: string, options: Options, onAnswer: (result: { data?: unknown; error?: unknown }) => void, onFailure: (error: unknown) => void): void {
    const request: FakeRequest = {
      name,
      variables: options.variables ?? {},
      context: options.context,
      fetchPolicy: options.fetchPolicy,
      answer: (result) => {
        answered.add(request);
        onAnswer(result);
      },
      fail: (error) => {
        answered.add(request);
        onFailure(error);
      },
    };
    this.requests.push(request);
  }
}

const answered = new WeakSet<FakeRequest>();

function required(document: DocumentNode | undefined): DocumentNode {
  if (!document) {
    throw new Error('an operation without a document');
  }
  return document;
}

/** Stands in for {@link LiveConnection}: the socket is up until the test drops it, and {@link reconnect} brings it back. */
export class FakeLiveConnection implements Pick<LiveConnection, 'connected' | 'addReconnectListener' | 'removeReconnectListener'> {
  private readonly open = signal(true);
  private readonly listeners = new Set<() => void>();
  readonly connected = this.open.asReadonly();

  addReconnectListener(listener: () => void): void {
    this.listeners.add(listener);
  }

  removeReconnectListener(listener: () => void): void {
    this.listeners.delete(listener);
  }

  drop(): void {
    this.open.set(false);
  }

  /** The socket is up again; graphql-ws tells every listener. */
  reconnect(): void {
    this.open.set(true);
    for (const listener of [...this.listeners]) {
      listener();
    }
  }
}

import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { operationText } from './api-process';
import type { StatusSeen } from './console-browser';

/** A graphql-ws subscription that collects what it receives, for assertions. */
export interface CollectedSubscription<T> {
  readonly messages: T[];
  /** When each message arrived (epoch ms), by its index in `messages`. */
  readonly receivedAt: number[];
  readonly errors: unknown[];
  /** Resolves with the messages once `done(messages)` holds, or rejects after `timeoutMs`. */
  until(done: (messages: readonly T[]) => boolean, timeoutMs: number): Promise<T[]>;
  close(): Promise<void>;
}

/**
 * Subscribes over graphql-ws as the console does (token in connection_init), to a subscription of
 * libs/shared/api-schema (its messages typed from the schema) or to one written in the test.
 */
export function subscribe<TData, TVariables>(apiUrl: string, token: string, document: TypedDocumentNode<TData, TVariables>, variables: TVariables): CollectedSubscription<TData>;
export function subscribe<T>(apiUrl: string, token: string, query: string, variables: Record<string, unknown>): CollectedSubscription<T>;
export function subscribe<T>(apiUrl: string, token: string, operation: string | TypedDocumentNode, variables: unknown): CollectedSubscription<T> {
  const query = operationText(operation);
  const client: Client = createClient({
    url: `${apiUrl.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${token}` },
    retryAttempts: 30,
    shouldRetry: () => true,
    lazy: false,
  });
  const messages: T[] = [];
  const receivedAt: number[] = [];
  const errors: unknown[] = [];
  const waiters = new Set<() => void>();
  const dispose = client.subscribe<T>(
    { query, variables: variables as Record<string, unknown> },
    {
      next: (value) => {
        if (value.errors) {
          errors.push(value.errors);
        } else if (value.data) {
          messages.push(value.data as T);
          receivedAt.push(Date.now());
        }
        waiters.forEach((wake) => wake());
      },
      error: (error) => {
        errors.push(error);
        waiters.forEach((wake) => wake());
      },
      complete: () => undefined,
    },
  );
  return {
    messages,
    receivedAt,
    errors,
    until(done, timeoutMs) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (done(messages)) {
            clearTimeout(timer);
            waiters.delete(check);
            resolve([...messages]);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`subscription condition not met within ${timeoutMs} ms; ${messages.length} messages, errors: ${JSON.stringify(errors).slice(0, 500)}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    async close() {
      dispose();
      await client.dispose();
    },
  };
}

/** The status changes of a cluster's nodes as the API publishes them, each with when it arrived here. */
export interface NodeStatusChanges {
  seen(): StatusSeen[];
  /** Resolves once each of `hostnames` has been published with a status other than ADDING. */
  untilAllLeftAdding(hostnames: readonly string[], timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

export function nodeStatusChanges(apiUrl: string, token: string, clusterId: string): NodeStatusChanges {
  const changes = subscribe<{ nodeChanged: { node: { hostname: string; status: string } | null } }>(
    apiUrl,
    token,
    'subscription($c: ID!) { nodeChanged(clusterId: $c) { node { hostname status } } }',
    { c: clusterId },
  );
  const seen = () => changes.messages.map(({ nodeChanged }, index) => ({ hostname: nodeChanged.node?.hostname ?? '', status: nodeChanged.node?.status ?? 'DELETED', at: changes.receivedAt[index] ?? 0 }));
  return {
    seen,
    async untilAllLeftAdding(hostnames, timeoutMs) {
      await changes.until(() => hostnames.every((hostname) => seen().some((change) => change.hostname === hostname && change.status !== 'ADDING')), timeoutMs);
    },
    close: () => changes.close(),
  };
}

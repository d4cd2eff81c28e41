import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { operationText } from './api-process';

/** A graphql-ws subscription that collects what it receives, for assertions. */
export interface CollectedSubscription<T> {
  readonly messages: T[];
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

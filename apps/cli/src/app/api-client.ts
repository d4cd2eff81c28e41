import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print } from 'graphql';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { CliError, EXIT, type ExitCode } from './exit-codes';
import { type Language, type ServerErrorExtensions, type Translate, serverErrorText } from './messages';

interface GraphqlError {
  readonly message: string;
  readonly extensions?: ServerErrorExtensions & { readonly code?: string };
}

/** How an error code from the API maps to the CLI's exit codes. */
function exitFor(code: string | undefined): ExitCode {
  switch (code) {
    case 'UNAUTHENTICATED':
    case 'FORBIDDEN':
    case 'LOGIN_THROTTLED':
      return EXIT.auth;
    case 'NOT_FOUND':
      return EXIT.notFound;
    default:
      return EXIT.failed;
  }
}

/** A stream of subscription payloads that ends when `stop` is called or the server completes it. */
export interface Subscription {
  /** Resolves when the stream ends (completed or stopped); rejects on a transport or GraphQL error. */
  readonly done: Promise<void>;
  stop(): void;
}

/**
 * The service's GraphQL API as the CLI uses it: the shared typed operations over HTTP(S), and
 * subscriptions over graphql-ws on the same /graphql with the token in connection_init.
 */
export class ApiClient {
  constructor(
    readonly server: string,
    private readonly token: string | null,
    private readonly t: Translate,
    private readonly language: Language = 'en',
  ) {}

  async request<R, V extends Record<string, unknown>>(document: TypedDocumentNode<R, V>, variables: V): Promise<R> {
    let response: Response;
    try {
      response = await fetch(new URL('/graphql', this.server), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', ...(this.token ? { authorization: `Bearer ${this.token}` } : {}) },
        body: JSON.stringify({ query: print(document), variables }),
      });
    } catch (error) {
      throw new CliError(this.t('unreachable', { server: this.server, detail: causeOf(error) }), EXIT.failed);
    }
    let body: { data?: R | null; errors?: GraphqlError[] };
    try {
      body = (await response.json()) as typeof body;
    } catch {
      throw new CliError(this.t('unreachable', { server: this.server, detail: `HTTP ${response.status}` }), EXIT.failed);
    }
    const error = body.errors?.[0];
    if (error || !body.data) {
      throw this.refusal(error ?? { message: `HTTP ${response.status}` });
    }
    return body.data;
  }

  /** Subscribes; `onNext` returns true to stop the stream. */
  subscribe<R, V extends Record<string, unknown>>(document: TypedDocumentNode<R, V>, variables: V, onNext: (data: R) => boolean | Promise<boolean>): Subscription {
    const client = createClient({
      url: new URL('/graphql', this.server).href.replace(/^http/, 'ws'),
      webSocketImpl: WebSocket,
      connectionParams: this.token ? { authorization: `Bearer ${this.token}` } : {},
      retryAttempts: 5,
      lazy: true,
    });
    let stopped = false;
    let unsubscribe: () => void = () => undefined;
    const done = new Promise<void>((resolve, reject) => {
      unsubscribe = client.subscribe<R>(
        { query: print(document), variables },
        {
          next: (value) => {
            if (value.errors?.length) {
              reject(this.refusal(value.errors[0] as GraphqlError));
              return;
            }
            if (value.data) {
              void Promise.resolve(onNext(value.data as R)).then(
                (finished) => {
                  if (finished) {
                    resolve();
                  }
                },
                reject,
              );
            }
          },
          error: (error) => reject(stopped ? undefined : this.socketError(error)),
          complete: () => resolve(),
        },
      );
    }).finally(() => {
      stopped = true;
      unsubscribe();
      void client.dispose();
    });
    return {
      done,
      stop: () => {
        stopped = true;
        unsubscribe();
      },
    };
  }

  private refusal(error: GraphqlError): CliError {
    const code = error.extensions?.code;
    const exit = exitFor(code);
    const key = exit === EXIT.auth ? 'authFailed' : 'apiRefused';
    return new CliError(this.t(key, { detail: serverErrorText(this.language, error.message, error.extensions) }), exit, code);
  }

  private socketError(error: unknown): CliError {
    // graphql-ws rejects with the CloseEvent when the server refuses connection_init (4403 Forbidden).
    const close = error as { code?: number; reason?: string };
    if (close.code === 4403 || close.code === 4401) {
      return new CliError(this.t('authFailed', { detail: close.reason || 'the token was refused' }), EXIT.auth, 'UNAUTHENTICATED');
    }
    if (error instanceof CliError) {
      return error;
    }
    return new CliError(this.t('unreachable', { server: this.server, detail: close.reason || causeOf(error) }), EXIT.failed);
  }
}

function causeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}

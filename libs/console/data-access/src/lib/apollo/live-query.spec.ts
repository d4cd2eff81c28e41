import { DestroyRef } from '@angular/core';
import { TestBed } from '@angular/core/testing';
import { ApolloLink, InMemoryCache, type TypedDocumentNode, gql } from '@apollo/client';
import { Apollo, provideApollo } from 'apollo-angular';
import { Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { LiveQuery } from './live-query';

interface HostData {
  readonly host: { readonly __typename: 'Host'; readonly id: string; readonly status: string } | null;
}
const HOST: TypedDocumentNode<HostData, { id: string }> = gql`
  query Host($id: ID!) {
    host(id: $id) {
      id
      status
    }
  }
`;

/** The server: every request reaching it waits until the test answers it. */
function scriptedServer() {
  const waiting: Array<{ variables: Record<string, unknown>; answer(result: { data?: unknown; errors?: unknown[] }): void }> = [];
  const link = new ApolloLink(
    (operation) =>
      new Observable((observer) => {
        waiting.push({
          variables: operation.variables,
          answer: (result) => {
            observer.next(result as never);
            observer.complete();
          },
        });
      }),
  );
  return { link, waiting };
}

function watched() {
  const server = scriptedServer();
  TestBed.configureTestingModule({ providers: [provideApollo(() => ({ link: server.link, cache: new InMemoryCache(), defaultOptions: { watchQuery: { fetchPolicy: 'cache-and-network' } } }))] });
  const query = new LiveQuery(TestBed.inject(Apollo), HOST, TestBed.inject(DestroyRef));
  return { query, server };
}

const host = (status: string): HostData => ({ host: { __typename: 'Host', id: 'h-1', status } });

describe('a watched query as a page shows it', () => {
  it('is loading until the answer comes, then shows it', async () => {
    const { query, server } = watched();
    query.watch({ id: 'h-1' });
    expect(query.loading()).toBe(true);
    await expect.poll(() => server.waiting.length).toBe(1);
    expect(server.waiting[0]?.variables).toEqual({ id: 'h-1' });
    server.waiting[0]?.answer({ data: host('ADDING') });
    await expect.poll(() => query.data()?.host?.status).toBe('ADDING');
    expect(query.loading()).toBe(false);
  });

  it('sends a refetch asked for while a request is in flight, and shows the later answer', async () => {
    const { query, server } = watched();
    query.watch({ id: 'h-1' });
    await expect.poll(() => server.waiting.length).toBe(1);
    // The change the refetch is for happens after the first request left.
    query.refetch();
    await expect.poll(() => server.waiting.length).toBe(2);
    server.waiting[0]?.answer({ data: host('ADDING') });
    server.waiting[1]?.answer({ data: host('HOST_KEY_CHANGED') });
    await expect.poll(() => query.data()?.host?.status).toBe('HOST_KEY_CHANGED');
  });

  it('shows a failure as problems without data, and a retry that works clears them', async () => {
    const { query, server } = watched();
    query.watch({ id: 'h-1' });
    await expect.poll(() => server.waiting.length).toBe(1);
    server.waiting[0]?.answer({ errors: [{ message: 'no such host', extensions: { code: 'NOT_FOUND' } }] });
    await expect.poll(() => query.problems().map((problem) => problem.code)).toEqual(['NOT_FOUND']);
    expect(query.data()).toBeUndefined();
    expect(query.loading()).toBe(false);
    query.refetch();
    expect(query.problems()).toEqual([]);
    await expect.poll(() => server.waiting.length).toBe(2);
    server.waiting[1]?.answer({ data: host('JOINED') });
    await expect.poll(() => query.data()?.host?.status).toBe('JOINED');
  });

  it('forgets the data of the previous variables when it watches others', async () => {
    const { query, server } = watched();
    query.watch({ id: 'h-1' });
    await expect.poll(() => server.waiting.length).toBe(1);
    server.waiting[0]?.answer({ data: host('JOINED') });
    await expect.poll(() => query.data()?.host?.status).toBe('JOINED');
    query.watch({ id: 'h-2' });
    expect(query.data()).toBeUndefined();
    expect(query.loading()).toBe(true);
  });
});

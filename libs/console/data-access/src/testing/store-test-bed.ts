import { DOCUMENT } from '@angular/common';
import type { Provider, Type } from '@angular/core';
import { TestBed } from '@angular/core/testing';
import { Apollo } from 'apollo-angular';
import { fakeTab } from '@ccos/console/util-i18n/testing';
import { LiveConnection } from '../lib/apollo/live-connection';
import { FakeApollo, FakeLiveConnection } from './fake-apollo';

export interface StoreUnderTest<T> {
  readonly store: T;
  /** The server side: answer the store's requests, send subscription messages. */
  readonly api: FakeApollo;
  readonly connection: FakeLiveConnection;
}

/**
 * A store as a page provides it, with the API faked ({@link FakeApollo}) and a browser tab in
 * `languages` (for stores that word texts with I18n). TestBed destroys it after each test.
 */
export function storeUnderTest<T>(store: Type<T>, options: { readonly languages?: readonly string[]; readonly providers?: readonly Provider[] } = {}): StoreUnderTest<T> {
  const api = new FakeApollo();
  const connection = new FakeLiveConnection();
  TestBed.configureTestingModule({
    providers: [
      store,
      { provide: Apollo, useValue: api },
      { provide: LiveConnection, useValue: connection },
      { provide: DOCUMENT, useValue: fakeTab({ languages: options.languages ?? ['en-US'] }).document },
      ...(options.providers ?? []),
    ],
  });
  return { store: TestBed.inject(store), api, connection };
}

import { DOCUMENT } from '@angular/common';
import { EnvironmentInjector, createEnvironmentInjector } from '@angular/core';
import { TestBed } from '@angular/core/testing';
import { CombinedGraphQLErrors } from '@apollo/client';
import { describe, expect, it } from 'vitest';
import { FakeBrowser } from '@ccos/console/util-i18n/testing';
import { storeUnderTest } from '../../testing';
import { Notifications } from '../notifications/notifications';
import { AuthStore } from './auth.store';
import { Session } from './session';

const login = (userId: string) => ({ login: { token: `token-${userId}`, expiresAt: new Date(Date.now() + 3_600_000).toISOString(), user: { id: userId, username: `user-${userId}`, role: 'OPERATOR' } } });

describe('signing in and out', () => {
  it('starts the session for every tab and forgets what the previous user saw', async () => {
    const { store, api } = storeUnderTest(AuthStore);
    TestBed.inject(Notifications).show('error', 'an old toast');
    const signingIn = store.signIn('user-u-1', 'secret');
    expect(store.busy()).toBe(true);
    expect(api.pending('Login')[0]).toMatchObject({ variables: { username: 'user-u-1', password: 'secret' }, fetchPolicy: 'no-cache', context: { errorDisplay: 'caller' } });
    api.answer('Login', { data: login('u-1') });
    expect(await signingIn).toMatchObject({ ok: true, value: { id: 'u-1' } });
    expect(TestBed.inject(Session).token()).toBe('token-u-1');
    expect(api.cacheClears).toBe(1);
    expect(TestBed.inject(Notifications).items()).toEqual([]);
    expect(store.busy()).toBe(false);
  });

  it('gives the sign-in form the API’s refusal and stays signed out', async () => {
    const { store, api } = storeUnderTest(AuthStore);
    const signingIn = store.signIn('admin', 'wrong');
    api.answer('Login', { error: new CombinedGraphQLErrors({ errors: [{ message: 'wrong user name or password', extensions: { code: 'UNAUTHENTICATED' } }] }) });
    expect(await signingIn).toMatchObject({ ok: false, problems: [{ code: 'UNAUTHENTICATED', message: 'wrong user name or password' }] });
    expect(TestBed.inject(Session).signedIn()).toBe(false);
  });

  it('signs out here at once and ends the session on the server with its token, even when the server does not answer', async () => {
    const { store, api } = storeUnderTest(AuthStore);
    TestBed.inject(Session).start({ token: 'token-u-1', expiresAt: new Date(Date.now() + 3_600_000).toISOString(), user: { id: 'u-1', username: 'a', role: 'VIEWER' } });
    const signingOut = store.signOut();
    expect(TestBed.inject(Session).signedIn()).toBe(false);
    expect(TestBed.inject(Session).signedOutReason()).toBe('signed-out');
    api.pending('Logout')[0]?.fail(new TypeError('Failed to fetch'));
    await signingOut;
    expect(api.requests.find((request) => request.name === 'Logout')?.context).toMatchObject({ headers: { authorization: 'Bearer token-u-1' } });
    expect(api.cacheClears).toBe(1);
  });

  it('empties the cache when another tab signs in as someone else', () => {
    const browser = new FakeBrowser();
    const { api } = storeUnderTest(AuthStore, { providers: [{ provide: DOCUMENT, useValue: browser.openTab().document }] });
    TestBed.inject(AuthStore);
    TestBed.tick();
    const otherTab = createEnvironmentInjector([{ provide: DOCUMENT, useValue: browser.openTab().document }, Session], TestBed.inject(EnvironmentInjector)).get(Session);
    otherTab.start({ token: 'token-u-2', expiresAt: new Date(Date.now() + 3_600_000).toISOString(), user: { id: 'u-2', username: 'b', role: 'ADMIN' } });
    TestBed.tick();
    expect(TestBed.inject(Session).user()?.id).toBe('u-2');
    expect(api.cacheClears).toBe(1);
  });
});

import { DOCUMENT } from '@angular/common';
import { EnvironmentInjector, createEnvironmentInjector } from '@angular/core';
import { TestBed } from '@angular/core/testing';
import { describe, expect, it } from 'vitest';
import { FakeBrowser } from '@ccos/console/util-i18n/testing';
import { type SessionData, Session, parseSession } from './session';

const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString();
const session = (token: string, userId = 'u-1', role: SessionData['user']['role'] = 'OPERATOR'): SessionData => ({ token, expiresAt: inAnHour(), user: { id: userId, username: `user-${userId}`, role } });

/** Tabs of one browser, each with the console's Session as a page load creates it. */
function browserWithTabs(count: number): Session[] {
  const browser = new FakeBrowser();
  const root = TestBed.inject(EnvironmentInjector);
  return Array.from({ length: count }, () => createEnvironmentInjector([{ provide: DOCUMENT, useValue: browser.openTab().document }, Session], root).get(Session));
}

describe('one session for every tab of the browser', () => {
  it('signs every open tab in when one tab signs in, and a tab opened later is signed in too', () => {
    const browser = new FakeBrowser();
    const root = TestBed.inject(EnvironmentInjector);
    const open = () => createEnvironmentInjector([{ provide: DOCUMENT, useValue: browser.openTab().document }, Session], root).get(Session);
    const [first, second] = [open(), open()];
    first?.start(session('t-1'));
    expect(second?.token()).toBe('t-1');
    expect(second?.allows('OPERATOR')).toBe(true);
    expect(second?.allows('ADMIN')).toBe(false);
    expect(open().user()?.username).toBe('user-u-1');
  });

  it('signs the other tabs out with the reason, and counts it as a change of user there', () => {
    const [first, second] = browserWithTabs(2);
    first?.start(session('t-1'));
    const changesAfterSignIn = second?.otherTabChanges() ?? 0;
    first?.expire();
    expect(second?.signedIn()).toBe(false);
    expect(second?.signedOutReason()).toBe('expired');
    expect(second?.otherTabChanges()).toBe(changesAfterSignIn + 1);
    first?.start(session('t-2'));
    first?.signOut();
    expect(second?.signedOutReason()).toBe('signed-out');
  });

  it('tells the other tabs when someone else signed in, but not when the same user got a new token or role', () => {
    const [first, second] = browserWithTabs(2);
    first?.start(session('t-1', 'u-1'));
    const changesAfterSignIn = second?.otherTabChanges() ?? 0;
    first?.start(session('t-2', 'u-1', 'ADMIN'));
    expect(second?.allows('ADMIN')).toBe(true);
    expect(second?.otherTabChanges()).toBe(changesAfterSignIn);
    first?.start(session('t-3', 'u-2'));
    expect(second?.user()?.id).toBe('u-2');
    expect(second?.otherTabChanges()).toBe(changesAfterSignIn + 1);
  });

  it('keeps the token but takes the user’s new role from the API, in every tab', () => {
    const [first, second] = browserWithTabs(2);
    first?.start(session('t-1', 'u-1', 'VIEWER'));
    first?.updateUser({ id: 'u-1', username: 'user-u-1', role: 'ADMIN' });
    expect(first?.token()).toBe('t-1');
    expect(second?.allows('ADMIN')).toBe(true);
    // Someone else's record changes nothing here.
    first?.updateUser({ id: 'u-9', username: 'other', role: 'VIEWER' });
    expect(first?.allows('ADMIN')).toBe(true);
  });

  it('does not restore an expired or malformed session', () => {
    expect(parseSession(JSON.stringify(session('t-1')))?.token).toBe('t-1');
    expect(parseSession(JSON.stringify({ ...session('t-1'), user: { id: 'u-1', username: 'x', role: 'ROOT' } }))).toBeNull();
    expect(parseSession('{not json')).toBeNull();
    expect(parseSession(null)).toBeNull();
    const [first] = browserWithTabs(1);
    first?.start({ ...session('t-old'), expiresAt: new Date(Date.now() - 1_000).toISOString() });
    TestBed.tick();
    expect(first?.signedIn()).toBe(false);
    expect(first?.signedOutReason()).toBe('expired');
  });
});

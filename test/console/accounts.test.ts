import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ApiProcess, E2E_ADMIN_PASSWORD, startApiProcess } from '../support/api-process';
import { type PageRecord, descriptionOf, launchChromium, recordPage, screenshot } from '../support/console-browser';

/**
 * Accounts in Chromium against the built API: an admin's browser with two tabs (one
 * session shared by both), a second device of the admin, and a user on a browser of their
 * own. The admin changes their own password, disables and deletes a user, changes a role,
 * and signs one device out. Needs `npx nx run-many -t build -p api console`. The tests run
 * in order and share the browsers.
 */
const SCREENSHOTS = 'tmp/console-accounts-e2e';
const NEW_PASSWORD = 'a-new-admin-password';
/** A password check is a deliberately slow hash: polls wait as long as a locator does. */
const WAIT = { timeout: 10_000, interval: 50 };

let api: ApiProcess;
let browser: Browser;
let adminBrowser: BrowserContext;
let tab: Page;
let record: PageRecord;

async function newDevice(): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-US' });
  context.setDefaultTimeout(10_000);
  return context;
}

async function signIn(page: Page, username: string, password: string): Promise<void> {
  await page.goto(`${api.url}/sign-in`);
  await page.getByRole('textbox', { name: 'User name' }).fill(username);
  await page.getByLabel(/^Password/).fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Clusters', level: 1 }).waitFor();
}

async function openAccountPage(page: Page, link: 'Change password' | 'My sessions'): Promise<void> {
  await page.getByRole('button', { name: /^Account/ }).click();
  await page.getByRole('link', { name: link }).click();
  await page.getByRole('heading', { name: link, level: 1 }).waitFor();
}

async function onSignInPage(page: Page): Promise<void> {
  await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
  expect(new URL(page.url()).pathname).toBe('/sign-in');
}

describe('console: accounts', () => {
  beforeAll(async () => {
    [api, browser] = await Promise.all([startApiProcess(), launchChromium()]);
    const admin = await api.login();
    for (const [username, role] of [['alice', 'OPERATOR'], ['bob', 'VIEWER']] as const) {
      const created = await api.gql('mutation($i: CreateUserInput!) { createUser(input: $i) { id } }', { i: { username, password: `${username}-password-1`, role } }, admin);
      expect(created.errors).toBeUndefined();
    }
    adminBrowser = await newDevice();
    tab = await adminBrowser.newPage();
    record = recordPage(tab);
  });

  afterEach(async (context) => {
    if (context.task.result?.state === 'fail' && tab) {
      const file = await screenshot(tab, SCREENSHOTS, context.task.name).catch(() => 'none');
      console.error(`screenshot of the failure: ${file}\nAPI log tail:\n${api?.output().slice(-2000)}`);
    }
  });

  afterAll(async () => {
    await browser?.close();
    await api?.stop();
  });

  it('shares one session between the tabs of a browser', async () => {
    await signIn(tab, 'admin', E2E_ADMIN_PASSWORD);
    const second = await adminBrowser.newPage();
    await second.goto(`${api.url}/users`);
    await second.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
    await second.close();
  });

  it("changes the admin's own password from the user menu: checks the fields, keeps this session and signs out the others", async () => {
    const phone = await newDevice();
    const phoneTab = await phone.newPage();
    await signIn(phoneTab, 'admin', E2E_ADMIN_PASSWORD);

    await openAccountPage(tab, 'Change password');
    const current = tab.getByLabel(/^Current password/);
    const next = tab.getByLabel(/^New password\*?$/);
    const again = tab.getByLabel(/^New password again/);
    await current.fill('not-my-password');
    await next.fill(NEW_PASSWORD);
    await again.fill(`${NEW_PASSWORD}-typo`);
    await tab.getByRole('button', { name: 'Change password' }).click();
    await expect.poll(() => descriptionOf(again), WAIT).toContain('The two new passwords differ.');
    expect(record.graphqlOperations).not.toContain('ChangePassword');

    await again.fill(NEW_PASSWORD);
    await tab.getByRole('button', { name: 'Change password' }).click();
    await expect.poll(() => descriptionOf(current), WAIT).toContain('The current password is wrong.');
    expect(await current.getAttribute('aria-invalid')).toBe('true');

    await current.fill(E2E_ADMIN_PASSWORD);
    await tab.getByRole('button', { name: 'Change password' }).click();
    await tab.getByRole('status').filter({ hasText: 'Password changed. Your other sessions were signed out.' }).first().waitFor();

    // This browser stays signed in; the phone is out, and the old password no longer works.
    await tab.getByRole('navigation').getByRole('link', { name: 'Users' }).click();
    await tab.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
    await phoneTab.reload();
    await onSignInPage(phoneTab);
    await expect(api.login('admin', E2E_ADMIN_PASSWORD)).rejects.toThrow(/wrong user name or password/);
    await phone.close();
  });

  it("disables a user, whose open console is signed out, and enables them again", async () => {
    const aliceDevice = await newDevice();
    const alicePage = await aliceDevice.newPage();
    await signIn(alicePage, 'alice', 'alice-password-1');

    const row = tab.getByRole('row').filter({ hasText: 'alice' });
    await row.getByRole('button', { name: 'Disable alice' }).click();
    await tab.getByText('alice is disabled and signed out everywhere').first().waitFor();
    await row.getByText('Disabled').waitFor();

    await alicePage.reload();
    await onSignInPage(alicePage);
    await alicePage.getByRole('textbox', { name: 'User name' }).fill('alice');
    await alicePage.getByLabel(/^Password/).fill('alice-password-1');
    await alicePage.getByRole('button', { name: 'Sign in' }).click();
    expect(await alicePage.getByRole('alert').filter({ hasText: 'Sign-in failed' }).textContent()).toContain('user "alice" is disabled');

    await row.getByRole('button', { name: 'Enable alice' }).click();
    await tab.getByText('alice can sign in again').first().waitFor();
    await alicePage.getByLabel(/^Password/).fill('alice-password-1');
    await alicePage.getByRole('button', { name: 'Sign in' }).click();
    await alicePage.getByRole('heading', { name: 'Clusters', level: 1 }).waitFor();
    await aliceDevice.close();
  });

  it('changes a role, and refuses to demote the last admin with the reason', async () => {
    const alice = tab.getByRole('row').filter({ hasText: 'alice' });
    await alice.getByRole('combobox', { name: 'Role of alice' }).selectOption('VIEWER');
    await tab.getByText('alice is now Viewer').first().waitFor();
    const admin = tab.getByRole('row').filter({ hasText: '(you)' });
    await admin.getByRole('combobox', { name: 'Role of admin' }).selectOption('OPERATOR');
    await tab.getByText(/admin is the last active ADMIN; make another user ADMIN first/).first().waitFor();
    expect(await admin.getByRole('combobox', { name: 'Role of admin' }).inputValue()).toBe('ADMIN');
  });

  it("shows a user's sessions and signs one of them out", async () => {
    const [bobLaptop, bobPhone] = [await newDevice(), await newDevice()];
    const [laptopPage, phonePage] = [await bobLaptop.newPage(), await bobPhone.newPage()];
    await signIn(laptopPage, 'bob', 'bob-password-1');
    await signIn(phonePage, 'bob', 'bob-password-1');

    await tab.getByRole('row').filter({ hasText: 'bob' }).getByRole('button', { name: 'Sessions of bob' }).click();
    const sessions = tab.getByRole('region', { name: 'Sessions of bob' });
    await expect.poll(() => sessions.locator('tr[data-session]').count(), WAIT).toBe(2);
    expect(await sessions.locator('tr[data-session]').first().textContent()).toMatch(/Chrome \d+ · Linux.*127\.0\.0\.1/s);
    await screenshot(tab, SCREENSHOTS, 'users-with-sessions');
    await sessions.getByRole('button', { name: /^Sign out Chrome/ }).first().click();
    await tab.getByText(/^Signed out Chrome \d+ · Linux of bob$/).first().waitFor();
    await expect.poll(() => sessions.locator('tr[data-session]').count(), WAIT).toBe(1);

    // One of bob's browsers is signed out, the other is not.
    await laptopPage.reload();
    await phonePage.reload();
    const out = await Promise.race([
      laptopPage.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor().then(() => [laptopPage, phonePage] as const),
      phonePage.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor().then(() => [phonePage, laptopPage] as const),
    ]);
    await out[1].getByRole('heading', { name: 'Clusters', level: 1 }).waitFor();
    expect(await out[1].getByRole('heading', { name: 'Sign in' }).count()).toBe(0);
    await bobLaptop.close();
    await bobPhone.close();
  });

  it('deletes a user after a confirmation', async () => {
    const alice = tab.getByRole('row').filter({ hasText: 'alice' });
    await alice.getByRole('button', { name: 'Delete alice' }).click();
    const dialog = tab.getByRole('dialog', { name: 'Delete alice?' });
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(await alice.count()).toBe(1);
    await alice.getByRole('button', { name: 'Delete alice' }).click();
    await dialog.getByRole('button', { name: 'Delete user' }).click();
    await tab.getByText('User alice deleted').first().waitFor();
    await expect.poll(() => tab.getByRole('row').filter({ hasText: 'alice' }).count(), WAIT).toBe(0);
  });

  it('lists my sessions and signs out the other device, keeping this one', async () => {
    const laptop = await newDevice();
    const laptopPage = await laptop.newPage();
    await signIn(laptopPage, 'admin', NEW_PASSWORD);

    await openAccountPage(tab, 'My sessions');
    const rows = tab.locator('tr[data-session]');
    await expect.poll(() => rows.count(), WAIT).toBe(2);
    expect(await tab.locator('tr[data-current="true"]').textContent()).toContain('This session');
    await screenshot(tab, SCREENSHOTS, 'my-sessions');
    await tab.locator('tr[data-session]:not([data-current])').getByRole('button', { name: /^Sign out/ }).click();
    await tab.getByText(/^Signed out Chrome \d+ · Linux$/).first().waitFor();
    await expect.poll(() => rows.count(), WAIT).toBe(1);
    await tab.getByText('No other sessions are signed in.').waitFor();

    await laptopPage.reload();
    await onSignInPage(laptopPage);
    await tab.reload();
    await tab.getByRole('heading', { name: 'My sessions', level: 1 }).waitFor();
    await laptop.close();
  });

  it('signs out every tab when one tab signs out', async () => {
    const other = await adminBrowser.newPage();
    await other.goto(`${api.url}/clusters`);
    await other.getByRole('heading', { name: 'Clusters', level: 1 }).waitFor();
    await other.getByRole('button', { name: /^Account/ }).click();
    await other.getByRole('button', { name: 'Sign out' }).click();
    await onSignInPage(other);
    // The first tab follows without a reload.
    await onSignInPage(tab);
    await other.close();
  });

  it('says in Chinese when sign-in is throttled and when to try again', async () => {
    await tab.getByRole('button', { name: '简体中文' }).click();
    await tab.getByRole('heading', { name: '登录', level: 1 }).waitFor();
    for (let attempt = 0; attempt < 6; attempt += 1) {
      await tab.getByRole('textbox', { name: '用户名' }).fill('bob');
      await tab.getByLabel(/^密码/).fill('not-bobs-password');
      const answered = tab.waitForResponse((response) => response.url().endsWith('/graphql') && (response.request().postData() ?? '').includes('"operationName":"Login"'));
      await tab.getByRole('button', { name: '登录' }).click();
      await answered;
    }
    await tab.getByRole('alert').filter({ hasText: /从您的地址为该用户输错密码的次数过多，请 \d+ 秒后重试。/ }).waitFor();
    await tab.getByRole('button', { name: 'English' }).click();
    await tab.getByRole('alert').filter({ hasText: /Too many wrong passwords for this user from your address\. Try again in \d+ s\./ }).waitFor();
  });

  it('raised no uncaught errors in the page', () => {
    expect(record.pageErrors).toEqual([]);
  });
});

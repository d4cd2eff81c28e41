import { lstat, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@ccos/api/data-access-db/testing';
import { E2E_SECRET_KEY, startApiProcess } from '../support/api-process';

const REGISTER = `mutation($input: RegisterClusterInput!) { registerCluster(input: $input) { id name } }`;
const KUBECONFIG = [
  'apiVersion: v1', 'kind: Config', 'current-context: c',
  'contexts: [{ name: c, context: { cluster: k, user: u } }]',
  'clusters: [{ name: k, cluster: { server: "https://198.18.0.2:6443" } }]',
  'users: [{ name: u, user: { token: "t0ken" } }]',
].join('\n');

/** Paths under `root` that group or others may read, write or enter. */
async function notPrivate(root: string): Promise<string[]> {
  const info = await lstat(root);
  const own = (info.mode & 0o077) !== 0 && !info.isSymbolicLink() ? [`${root} ${(info.mode & 0o777).toString(8)}`] : [];
  const children = info.isDirectory() ? await Promise.all((await readdir(root)).map((entry) => notPrivate(join(root, entry)))) : [];
  return [...own, ...children.flat()];
}

describe('npm start on a fresh machine (embedded database, no environment)', () => {
  const dataDir = mkdtemp(join(tmpdir(), 'ccos-start-'));
  afterAll(async () => rm(await dataDir, { recursive: true, force: true }));

  it('serves /healthz, keeps a registered cluster across a restart, and keeps its secret key private', async () => {
    const api = await startApiProcess({ embedded: true, dataDir: await dataDir, env: { ADMIN_PASSWORD: '' } });
    try {
      expect(await (await fetch(`${api.url}/healthz`)).json()).toEqual({ status: 'ok' });
      // No ADMIN_PASSWORD: the first start prints a generated one, once.
      const printed = /created user "admin" with password\s+(\S+)/.exec(api.output());
      expect(printed).not.toBeNull();
      const token = await api.login('admin', printed?.[1]);
      const registered = await api.gql(REGISTER, { input: { name: 'demo', apiServerUrl: 'https://198.18.0.2:6443', vip: '198.18.0.2', kubeconfig: KUBECONFIG } }, token);
      expect(registered.errors).toBeUndefined();
      expect((await stat(join(await dataDir, 'secret.key'))).mode & 0o777).toBe(0o600);
      // The embedded database's password sits beside it; nothing in the data folder is open to others.
      expect((await stat(join(await dataDir, 'database.password'))).mode & 0o777).toBe(0o600);
      expect((await stat(await dataDir)).mode & 0o777).toBe(0o700);
      expect(await notPrivate(await dataDir)).toEqual([]);

      await api.restart();
      expect(api.output().match(/created user "admin"/g)).toHaveLength(1);
      const token2 = await api.login('admin', printed?.[1]);
      const listed = await api.gql<{ clusters: Array<{ name: string }> }>('{ clusters { name } }', {}, token2);
      expect(listed.data?.clusters).toEqual([{ name: 'demo' }]);
      // The console is served at / (built by `npm run build`).
      const page = await fetch(`${api.url}/`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<ccos-root>');
    } finally {
      await api.stop();
    }
  });
});

describe('secrets as files, as the deployment mounts them (DATABASE_URL_FILE, SECRET_KEY_FILE, ADMIN_PASSWORD_FILE)', () => {
  const password = 'password-from-a-mounted-secret';
  let dir: string;
  let database: TestDatabase;
  let files: Record<'DATABASE_URL_FILE' | 'SECRET_KEY_FILE' | 'ADMIN_PASSWORD_FILE', string>;
  // The plain variables are left empty (not given): only the files carry the secrets.
  const noPlainSecrets = { DATABASE_URL: '', SECRET_KEY: '', ADMIN_PASSWORD: '' };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ccos-secret-files-'));
    database = await createTestDatabase('ccos_e2e');
    files = { DATABASE_URL_FILE: join(dir, 'database-url'), SECRET_KEY_FILE: join(dir, 'secret-key'), ADMIN_PASSWORD_FILE: join(dir, 'admin-password') };
    // As a Secret volume holds them (kubectl create secret --from-literal: no line break), or written by hand (one).
    await writeFile(files.DATABASE_URL_FILE, database.url, { mode: 0o400 });
    await writeFile(files.SECRET_KEY_FILE, `${E2E_SECRET_KEY}\n`, { mode: 0o400 });
    await writeFile(files.ADMIN_PASSWORD_FILE, password, { mode: 0o400 });
  });
  afterAll(async () => {
    await database?.drop();
    await rm(dir, { recursive: true, force: true });
  });

  it('starts on the database, key and admin password read from the files, none of them in its environment', async () => {
    const api = await startApiProcess({ database, dataDir: join(dir, 'data'), env: { ...noPlainSecrets, ...files } });
    api.secrets.noteSecret(password, 'ADMIN_PASSWORD_FILE');
    try {
      const token = await api.login('admin', password);
      const registered = await api.gql(REGISTER, { input: { name: 'from-files', apiServerUrl: 'https://198.18.0.2:6443', vip: '198.18.0.2', kubeconfig: KUBECONFIG } }, token);
      expect(registered.errors).toBeUndefined();
      // The Postgres server of the file's URL, not the embedded database a missing DATABASE_URL would mean.
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      try {
        expect((await client.query('SELECT name FROM clusters')).rows).toEqual([{ name: 'from-files' }]);
      } finally {
        await client.end();
      }
      const environment = (await readFile(`/proc/${api.pid()}/environ`, 'utf8')).split('\0');
      expect(environment.filter((entry) => entry.includes(password) || entry.includes(E2E_SECRET_KEY) || entry.includes(database.url))).toEqual([]);
      expect(environment).toContain(`SECRET_KEY_FILE=${files.SECRET_KEY_FILE}`);
    } finally {
      await api.stop();
    }
  });

  it.each([
    ['a secret given both ways', { SECRET_KEY: E2E_SECRET_KEY }, 'ccos-scaler cannot start: SECRET_KEY and SECRET_KEY_FILE are both set: give the secret one way only'],
    ['a file that does not exist', { ADMIN_PASSWORD_FILE: '/nonexistent/admin-password' }, 'ccos-scaler cannot start: ADMIN_PASSWORD_FILE=/nonexistent/admin-password cannot be read (ENOENT)'],
  ])('refuses to start with %s, saying so in one line', async (_case, env, said) => {
    const started = startApiProcess({ database, dataDir: join(dir, 'refused'), env: { ...noPlainSecrets, ...files, ...env } });
    const error = await started.then(
      async (api) => {
        await api.stop();
        return null;
      },
      (failure: unknown) => failure as Error,
    );
    expect(error?.message).toMatch(/^API exited with 1:/);
    expect(error?.message).toContain(said);
    // One line: no stack trace.
    expect(error?.message).not.toMatch(/\n\s+at /);
  });
});

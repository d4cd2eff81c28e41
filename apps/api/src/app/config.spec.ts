import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Environment, SECRET_VARIABLES, forgetSecretVariables, loadConfig } from './config';

const KEY = 'k'.repeat(44);
const DATABASE = 'postgres://ccos:s3cret@db.example:5432/ccos';

describe('configuration', () => {
  let dir: string;
  const base = (): Environment => ({ DATA_DIR: join(dir, 'data') });
  const secretFile = async (name: string, content: string): Promise<string> => {
    const file = join(dir, name);
    await writeFile(file, content, { mode: 0o600 });
    return file;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ccos-config-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  describe('secrets as files (*_FILE)', () => {
    it('reads DATABASE_URL, SECRET_KEY and ADMIN_PASSWORD from the files their _FILE variables name, without the line break a file ends with', async () => {
      const config = await loadConfig({
        ...base(),
        DATABASE_URL_FILE: await secretFile('database-url', `${DATABASE}\n`),
        SECRET_KEY_FILE: await secretFile('secret-key', `${KEY}\r\n`),
        ADMIN_PASSWORD_FILE: await secretFile('admin-password', 'pa ss word \n'),
      });
      expect([config.databaseUrl, config.secretKey, config.adminPassword]).toEqual([DATABASE, KEY, 'pa ss word ']);
    });

    it('still takes the plain variables', async () => {
      const config = await loadConfig({ ...base(), DATABASE_URL: DATABASE, SECRET_KEY: KEY, ADMIN_PASSWORD: 'plain-password' });
      expect([config.databaseUrl, config.secretKey, config.adminPassword]).toEqual([DATABASE, KEY, 'plain-password']);
    });

    it('an empty admin password file means none was given (a password is generated on the first start)', async () => {
      const config = await loadConfig({ ...base(), SECRET_KEY: KEY, ADMIN_PASSWORD_FILE: await secretFile('empty-password', '\n') });
      expect(config.adminPassword).toBeUndefined();
    });

    it.each(SECRET_VARIABLES)('refuses %s given both ways, naming both', async (name) => {
      const env = { ...base(), DATABASE_URL: DATABASE, SECRET_KEY: KEY, ADMIN_PASSWORD: 'plain-password', [`${name}_FILE`]: await secretFile(`both-${name}`, 'from-the-file') };
      await expect(loadConfig(env)).rejects.toThrow(`${name} and ${name}_FILE are both set: give the secret one way only`);
    });

    it('refuses a _FILE that does not exist or is not a file, naming the variable, the file and why', async () => {
      const missing = join(dir, 'no-such-file');
      await expect(loadConfig({ ...base(), SECRET_KEY: KEY, DATABASE_URL_FILE: missing })).rejects.toThrow(`DATABASE_URL_FILE=${missing} cannot be read (ENOENT)`);
      await expect(loadConfig({ ...base(), SECRET_KEY_FILE: dir })).rejects.toThrow(`SECRET_KEY_FILE=${dir} cannot be read (EISDIR)`);
    });

    it('a secret from a file counts like the variable: SECRET_KEY is still required with a database', async () => {
      await expect(loadConfig({ ...base(), DATABASE_URL_FILE: await secretFile('database-only', DATABASE) })).rejects.toThrow(/^SECRET_KEY \(or SECRET_KEY_FILE\) is required with DATABASE_URL/);
    });

    it('forgetSecretVariables drops the plain secret variables (children inherit none) and leaves the rest', () => {
      const env: Environment = { DATABASE_URL: DATABASE, SECRET_KEY: KEY, ADMIN_PASSWORD: 'x', SECRET_KEY_FILE: '/run/secrets/key', PORT: '4000' };
      forgetSecretVariables(env);
      expect(env).toEqual({ SECRET_KEY_FILE: '/run/secrets/key', PORT: '4000' });
    });
  });

  describe('listeners of their own (AGENT_PORT, METRICS_PORT)', () => {
    it('are off unless set: agents and /metrics stay on PORT', async () => {
      const config = await loadConfig({ ...base(), SECRET_KEY: KEY });
      expect([config.port, config.agentPort, config.metricsListener]).toEqual([4000, null, null]);
    });

    it('take their ports; the metrics listener listens on HOST unless METRICS_HOST says otherwise', async () => {
      expect(await loadConfig({ ...base(), SECRET_KEY: KEY, HOST: '10.0.0.5', AGENT_PORT: '4443', METRICS_PORT: '9090' })).toMatchObject({
        host: '10.0.0.5',
        agentPort: 4443,
        metricsListener: { port: 9090, host: '10.0.0.5' },
      });
      expect((await loadConfig({ ...base(), SECRET_KEY: KEY, METRICS_PORT: '9090', METRICS_HOST: '127.0.0.1' })).metricsListener).toEqual({ port: 9090, host: '127.0.0.1' });
      // 0 picks a free port for each (tests).
      expect(await loadConfig({ ...base(), SECRET_KEY: KEY, PORT: '0', AGENT_PORT: '0', METRICS_PORT: '0' })).toMatchObject({ agentPort: 0, metricsListener: { port: 0 } });
    });

    it('refuses a port shared between listeners, a port that is not one, and METRICS_HOST without METRICS_PORT', async () => {
      await expect(loadConfig({ ...base(), SECRET_KEY: KEY, AGENT_PORT: '4000' })).rejects.toThrow('PORT and AGENT_PORT are both 4000: each listener needs a port of its own');
      await expect(loadConfig({ ...base(), SECRET_KEY: KEY, AGENT_PORT: '4443', METRICS_PORT: '4443' })).rejects.toThrow('AGENT_PORT and METRICS_PORT are both 4443');
      await expect(loadConfig({ ...base(), SECRET_KEY: KEY, AGENT_PORT: '70000' })).rejects.toThrow('AGENT_PORT=70000 is not an integer between 0 and 65535');
      await expect(loadConfig({ ...base(), SECRET_KEY: KEY, METRICS_HOST: '127.0.0.1' })).rejects.toThrow(/^METRICS_HOST is where the metrics listener listens: set METRICS_PORT too/);
    });
  });

  describe('the process\'s role (SERVICE_ROLE)', () => {
    it('is everything in one process unless set, and takes api or worker (any case) with a database server', async () => {
      expect((await loadConfig(base())).role).toBe('all');
      expect((await loadConfig({ ...base(), DATABASE_URL: DATABASE, SECRET_KEY: KEY, SERVICE_ROLE: 'api' })).role).toBe('api');
      expect((await loadConfig({ ...base(), DATABASE_URL: DATABASE, SECRET_KEY: KEY, SERVICE_ROLE: ' Worker ', AGENT_API_URL: 'https://10.0.0.5:4443' })).role).toBe('worker');
    });

    it('refuses a role it does not know, and a split on the embedded database (which serves one process)', async () => {
      await expect(loadConfig({ ...base(), DATABASE_URL: DATABASE, SECRET_KEY: KEY, SERVICE_ROLE: 'scheduler' })).rejects.toThrow('SERVICE_ROLE=scheduler is not a role of the service: one of all, api, worker');
      await expect(loadConfig({ ...base(), SERVICE_ROLE: 'worker' })).rejects.toThrow(/^SERVICE_ROLE=worker splits the service into processes that share a Postgres server: set DATABASE_URL/);
    });

    it('refuses a worker without AGENT_API_URL: it starts agents, and its own port serves only probes', async () => {
      await expect(loadConfig({ ...base(), DATABASE_URL: DATABASE, SECRET_KEY: KEY, SERVICE_ROLE: 'worker' })).rejects.toThrow(/^SERVICE_ROLE=worker starts agents but does not serve them: set AGENT_API_URL/);
    });
  });

  describe('AGENT_LAUNCHER_URL (a simulated fleet instead of SSH)', () => {
    it('is off unless set, and takes a launcher on loopback', async () => {
      expect((await loadConfig(base())).agentLauncherUrl).toBeNull();
      expect((await loadConfig({ ...base(), AGENT_LAUNCHER_URL: 'http://127.0.0.1:39111/' })).agentLauncherUrl).toBe('http://127.0.0.1:39111');
    });

    it('refuses any other address: the launcher is handed every run\'s agent token', async () => {
      for (const url of ['http://10.0.0.5:39111', 'https://127.0.0.1:39111', 'http://127.0.0.1.example.com:1', 'file:///tmp/launch']) {
        await expect(loadConfig({ ...base(), AGENT_LAUNCHER_URL: url })).rejects.toThrow(`AGENT_LAUNCHER_URL=${url} must be http://127.0.0.1:<port>`);
      }
    });
  });
});

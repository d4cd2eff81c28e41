import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './cli';

/** Runs the CLI in-process with no service behind it: only what is decided before any request. */
async function run(argv: string[], env: Record<string, string> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli({
    argv,
    env: { HOME: '/nonexistent', CCOS_SERVER: 'http://127.0.0.1:9', LANG: 'en_US.UTF-8', ...env },
    io: { out: (line) => out.push(line), err: (line) => err.push(line) },
    stdin: Readable.from([]) as unknown as NodeJS.ReadStream,
  });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('runCli', () => {
  it.each([
    [['nodes', 'list', '--colour'], /Unknown option '--colour'/],
    [['nodes'], /unknown command "nodes"/],
    [['--bogus'], /unknown command "--bogus"/],
    [['clusters', 'list', '--output', 'xml'], /--output must be table, json or yaml/],
    [['nodes', 'install'], /NODE is required/],
    [['nodes', 'install', 'a', 'b'], /unexpected argument "b"/],
    [['nodes', 'add', '--hostname', 'h1', '--ip', '10.0.0.1', '--password', 'hunter2'], /Unknown option '--password'/],
    [['nodes', 'remove', 'h1', '--timeout', 'soon'], /--timeout must be a whole number/],
    [['login'], /--password-file FILE or --password-stdin/],
    [['nodes', 'delete'], /NODE is required/],
    [['nodes', 'delete', 'a', 'b'], /unexpected argument "b"/],
    [['nodes', 'credentials', 'h1'], /--password-file FILE or --password-stdin/],
    [['nodes', 'credentials', 'h1', '--password', 'hunter2'], /Unknown option '--password'/],
    [['nodes', 'credentials', 'h1', '--passphrase-file', '/dev/null', '--password-stdin'], /--passphrase-file goes with --private-key-file/],
    [['nodes', 'add', '--hostname', 'h1', '--ip', '10.0.0.1', '--partial', '--password-stdin'], /--partial applies only to --from-csv/],
    [['nodes', 'add', '--from-csv', 'hosts.csv', '--acknowledge-old-certificates', '--password-stdin'], /--acknowledge-old-certificates applies to one host/],
    [['clusters', 'check', 'extra'], /unexpected argument "extra"/],
    [['clusters', 'prepare', '--namespace', 'x'], /Unknown option '--namespace'/],
  ])('%j is a usage error (exit 2)', async (argv, message) => {
    const result = await run(argv, { CCOS_TOKEN: 'token' });
    expect(result.code).toBe(2);
    expect(result.err).toMatch(message);
    expect(result.err).not.toContain('hunter2');
  });

  describe('nodes add --from-csv', () => {
    let dir = '';
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'ccos-cli-spec-'));
    });
    afterAll(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it.each([
      ['a file with only a header', 'hostname,ip,port,user\n', /names no host/],
      ['a file with only comments', '# nothing yet\n\n', /names no host/],
    ])('refuses %s before it asks for a secret or the service (exit 2)', async (_name, text, message) => {
      const file = join(dir, 'hosts.csv');
      await writeFile(file, text);
      const result = await run(['nodes', 'add', '--from-csv', file], { CCOS_TOKEN: 'token' });
      expect(result).toMatchObject({ code: 2, err: expect.stringMatching(message) });
    });

    it('refuses a port that is no port for the rows without one (exit 2)', async () => {
      const file = join(dir, 'port.csv');
      await writeFile(file, 'h1,10.0.0.1\n');
      const result = await run(['nodes', 'add', '--from-csv', file, '--port', '0', '--password-stdin'], { CCOS_TOKEN: 'token' });
      expect(result).toMatchObject({ code: 2, err: expect.stringMatching(/port "0" is not a number from 1 to 65535/) });
    });
  });

  it('prints the usage with exit 0 for --help or no arguments', async () => {
    expect((await run(['--help'])).code).toBe(0);
    expect((await run([])).out).toContain('Exit codes: 0 ok, 1 operation failed, 2 usage error, 3 authentication failed, 4 not found, 5 plan: something would change.');
  });

  it('needs a token before it asks the service anything (exit 3)', async () => {
    const result = await run(['clusters', 'list']);
    expect(result).toMatchObject({ code: 3, err: 'not signed in: run ccos-scaler login, or set CCOS_TOKEN' });
  });

  it('says an unreachable service is a failed operation (exit 1)', async () => {
    const result = await run(['clusters', 'list'], { CCOS_TOKEN: 'token' });
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/^cannot reach http:\/\/127\.0\.0\.1:9: /);
  });

  it('speaks Chinese under LANG=zh_CN.UTF-8', async () => {
    const result = await run(['clusters', 'list'], { LANG: 'zh_CN.UTF-8' });
    expect(result.err).toBe('尚未登录：请运行 ccos-scaler login，或设置 CCOS_TOKEN');
    expect((await run(['--help'], { LANG: 'zh_CN.UTF-8' })).out).toContain('退出码：0 成功');
    expect((await run(['nodes', 'delete'], { LANG: 'zh_CN.UTF-8' })).err).toBe('用法错误：缺少NODE（见 ccos-scaler --help）');
  });

  it('lists the commands the console can do too, with the secrets they take', async () => {
    for (const env of [{ LANG: 'en_US.UTF-8' }, { LANG: 'zh_CN.UTF-8' }]) {
      const usage = (await run(['--help'], env)).out;
      expect(usage).toMatch(/nodes add \[--cluster \S+\] --from-csv \S+ .*\[--partial\]/);
      expect(usage).toMatch(/nodes delete \S+ \[--yes\]/);
      expect(usage).toMatch(/nodes clean \S+ \[--yes\]/);
      expect(usage).toMatch(/pools list \[--cluster \S+\]/);
      expect(usage).toMatch(/nodes credentials \S+ \[--user \S+\]/);
      expect(usage).toContain('--private-key-file');
      expect(usage).toMatch(/clusters check \[--cluster \S+\]/);
      expect(usage).toMatch(/clusters prepare \[--cluster \S+\]/);
    }
  });
});

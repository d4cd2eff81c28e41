import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PlayedSshHost, startLocalShellHost } from '../testing/played-ssh-host';
import { remoteSha256, remoteSha256s } from './remote-checksum';
import { openSshSession } from './ssh-connect';
import type { SshSession } from './ssh-session';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** The hashing scripts run by this machine's sh over a real SSH channel, on real files. */
describe('remote checksums', () => {
  let host: PlayedSshHost;
  let session: SshSession;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ccos-checksum-'));
    host = await startLocalShellHost();
    session = await openSshSession({ host: '127.0.0.1', port: host.port, username: 'root', auth: { kind: 'password', password: 'pw' } });
  });
  afterAll(async () => {
    await session.close();
    await host.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('hashes many files in one exec, a name with spaces and quotes too, and says which are gone', async () => {
    const plain = join(dir, 'kubelet.service');
    const odd = join(dir, "it's a $(name).conf");
    await writeFile(plain, '[Unit]\n');
    await writeFile(odd, 'x=1\n');
    const found = await remoteSha256s(session, [plain, odd, join(dir, 'gone')]);
    expect([...found]).toEqual([
      [plain, sha256('[Unit]\n')],
      [odd, sha256('x=1\n')],
      [join(dir, 'gone'), null],
    ]);
    expect((await remoteSha256(session, odd)).sha256).toBe(sha256('x=1\n'));
  });

  it('names a file that is there but no regular file, instead of calling it changed', async () => {
    await expect(remoteSha256s(session, [dir])).rejects.toThrow(`Checking ${dir} on 127.0.0.1:${host.port} failed: the file is not readable by the SSH user (use sudo).`);
  });

  it('asks nothing of the host for no files', async () => {
    expect((await remoteSha256s(session, [])).size).toBe(0);
  });
});

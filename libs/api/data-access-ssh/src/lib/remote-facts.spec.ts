import { cpus, totalmem } from 'node:os';
import { describe, expect, it } from 'vitest';
import { startLocalShellHost } from '../testing/played-ssh-host';
import { parseDf, parseOsRelease, parseRemoteFacts, readRemoteFacts } from './remote-facts';
import { openSshSession } from './ssh-connect';

describe('parseOsRelease', () => {
  it.each([
    ['RHEL-like with quotes', 'NAME="CCOS"\nID="ccos"\nID_LIKE="rhel fedora"\nVERSION_ID="4.12"\nPRETTY_NAME="CCOS 4.12 (lab host)"\n',
      { id: 'ccos', versionId: '4.12', prettyName: 'CCOS 4.12 (lab host)', idLike: ['rhel', 'fedora'] }],
    ['Debian, unquoted ID', 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nVERSION_ID="12"\nID=debian\n',
      { id: 'debian', versionId: '12', prettyName: 'Debian GNU/Linux 12 (bookworm)', idLike: [] }],
    ['single quotes, escapes, comments, blanks, CRLF-free junk', "# comment\n\nID='rocky'\nPRETTY_NAME=\"Rocky \\\"Blue\\\" Onyx\"\n  VERSION_ID=9.3  \nnot a line\n",
      { id: 'rocky', versionId: '9.3', prettyName: 'Rocky "Blue" Onyx', idLike: [] }],
    ['empty file', '', { id: null, versionId: null, prettyName: null, idLike: [] }],
  ])('%s', (_name, text, expected) => {
    expect(parseOsRelease(text)).toEqual(expected);
  });
});

describe('parseDf', () => {
  it.each([
    ['plain', 'Filesystem     1024-blocks    Used Available Capacity Mounted on\n/dev/vda1         20509264 8123456  11321196      42% /\n',
      { totalBytes: 20509264 * 1024, freeBytes: 11321196 * 1024, mountPoint: '/' }],
    ['names with spaces', 'Filesystem 1024-blocks Used Available Capacity Mounted on\nmy disk 1000 10 990 1% /mnt/my data\n',
      { totalBytes: 1000 * 1024, freeBytes: 990 * 1024, mountPoint: '/mnt/my data' }],
    ['overlay', 'Filesystem 1024-blocks Used Available Capacity Mounted on\noverlay 264211068 183654372 80556696 70% /etc\n',
      { totalBytes: 264211068 * 1024, freeBytes: 80556696 * 1024, mountPoint: '/etc' }],
  ])('%s', (_name, text, expected) => {
    expect(parseDf(text)).toEqual(expected);
  });

  it('refuses output without a data line', () => {
    expect(() => parseDf('df: /x: No such file or directory\n')).toThrow(/cannot read df output/);
  });
});

describe('parseRemoteFacts', () => {
  const output = [
    '@@arch', 'x86_64',
    '@@kernel', '5.14.0-362.el9.x86_64',
    '@@hostname', 'worker-1',
    '@@os-release', 'ID="ccos"', 'VERSION_ID="4.12"', 'PRETTY_NAME="CCOS 4.12"', '@@weird-line-in-between-is-ignored',
    '@@measured', '/opt',
    '@@df', 'Filesystem 1024-blocks Used Available Capacity Mounted on', '/dev/sda2 1000 100 900 10% /',
    '@@end', '',
  ].join('\n');

  it('reads every section', () => {
    expect(parseRemoteFacts(output, '/opt/ccos-scaler')).toEqual({
      arch: 'x86_64',
      kernel: '5.14.0-362.el9.x86_64',
      hostname: 'worker-1',
      os: { id: 'ccos', versionId: '4.12', prettyName: 'CCOS 4.12', idLike: [] },
      disk: { path: '/opt/ccos-scaler', measuredPath: '/opt', mountPoint: '/', freeBytes: 900 * 1024, totalBytes: 1000 * 1024 },
      hardware: { cpus: null, cpuModel: null, memoryBytes: null, disks: [], nics: [], systemVendor: null, systemProduct: null, systemSerial: null },
    });
  });

  it('reads the hardware a host tells, leaving out what it does not and placeholders firmware writes', () => {
    const hardware = [
      '@@cpus', '8',
      '@@cpu-model', ' Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz',
      '@@memory', 'MemTotal:       16303924 kB',
      '@@disks', 'sda 937703088 1', 'nvme0n1 1000215216 0', 'sdb 0 1', 'vdc 2097152',
      '@@nics', 'eth0 52:54:00:AB:cd:01 up', 'eth1 00:00:00:00:00:00 down', 'ib0 80:00:02:08:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0f:ab:cd unknown',
      '@@dmi-vendor', 'Dell Inc.',
      '@@dmi-product', 'To Be Filled By O.E.M.',
      '@@dmi-serial',
    ].join('\n');
    expect(parseRemoteFacts(output.replace('@@end', `${hardware}\n@@end`), '/').hardware).toEqual({
      cpus: 8,
      cpuModel: 'Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz',
      memoryBytes: 16303924 * 1024,
      disks: [
        { name: 'sda', sizeBytes: 937703088 * 512, rotational: true },
        { name: 'nvme0n1', sizeBytes: 1000215216 * 512, rotational: false },
        { name: 'vdc', sizeBytes: 2097152 * 512, rotational: null },
      ],
      nics: [
        { name: 'eth0', mac: '52:54:00:ab:cd:01', state: 'up' },
        { name: 'eth1', mac: null, state: 'down' },
        { name: 'ib0', mac: '80:00:02:08:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0f:ab:cd', state: 'unknown' },
      ],
      systemVendor: 'Dell Inc.',
      systemProduct: null,
      systemSerial: null,
    });
  });

  it('survives CRLF and says what is missing', () => {
    expect(parseRemoteFacts(output.replace(/\n/g, '\r\n'), '/').arch).toBe('x86_64');
    expect(() => parseRemoteFacts(output.replace('@@kernel\n5.14.0-362.el9.x86_64\n', ''), '/')).toThrow(/no kernel/);
  });
});

describe('readRemoteFacts', () => {
  it('reads this machine\'s own facts and hardware through the real script over SSH', async () => {
    const host = await startLocalShellHost();
    const session = await openSshSession({ host: '127.0.0.1', port: host.port, username: 'root', auth: { kind: 'password', password: 'pw' } });
    try {
      const facts = await readRemoteFacts(session, { diskPath: '/tmp/ccos-no-such-folder/agent' });
      expect(facts.disk.measuredPath).toBe('/tmp');
      expect(facts.hardware.cpus).toBe(cpus().length);
      expect(facts.hardware.memoryBytes).toBe(totalmem());
      expect(facts.hardware.cpuModel).toBe(cpus()[0]?.model.trim());
      for (const nic of facts.hardware.nics) {
        expect(nic.name).not.toBe('lo');
      }
    } finally {
      await session.close();
      await host.stop();
    }
  });
});

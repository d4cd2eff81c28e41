import { describe, expect, it } from 'vitest';
import { parseDf, parseOsRelease, parseRemoteFacts } from './remote-facts';

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
    });
  });

  it('survives CRLF and says what is missing', () => {
    expect(parseRemoteFacts(output.replace(/\n/g, '\r\n'), '/').arch).toBe('x86_64');
    expect(() => parseRemoteFacts(output.replace('@@kernel\n5.14.0-362.el9.x86_64\n', ''), '/')).toThrow(/no kernel/);
  });
});

import { describe, expect, it } from 'vitest';
import { parseHostsCsv } from './hosts-csv';

describe('parseHostsCsv', () => {
  it.each([
    ['columns in order', 'hostname,ip,port,user\nh1,10.0.0.1,2222,core\n', { hostname: 'h1', ip: '10.0.0.1', port: '2222', user: 'core' }],
    ['columns in another order, case and spaces', ' IP , Hostname \n10.0.0.2 , h2\n', { hostname: 'h2', ip: '10.0.0.2', port: null, user: null }],
    ['quoted fields and empty optional ones', 'hostname,ip,port,user\n"h3","10.0.0.3",,\n', { hostname: 'h3', ip: '10.0.0.3', port: null, user: null }],
    ['comments, blank lines and CRLF', '# fleet\r\nhostname,ip\r\n\r\nh4,10.0.0.4\r\n', { hostname: 'h4', ip: '10.0.0.4', port: null, user: null }],
  ])('%s', (_name, text, expected) => {
    const { hosts } = parseHostsCsv(text);
    expect(hosts).toEqual([expect.objectContaining(expected)]);
  });

  it('numbers rows by their line in the file', () => {
    expect(parseHostsCsv('hostname,ip\n\nh1,10.0.0.1\nh2,10.0.0.2\n').hosts.map((host) => host.line)).toEqual([3, 4]);
  });

  it('keeps a quote doubled inside a quoted field', () => {
    expect(parseHostsCsv('hostname,ip,user\nh1,10.0.0.1,"a""b"\n').hosts[0]?.user).toBe('a"b');
  });

  it('reports the header it found, so a file without hostname/ip can be refused', () => {
    expect(parseHostsCsv('name,address\nh1,10.0.0.1\n').header).toEqual(['name', 'address']);
  });
});

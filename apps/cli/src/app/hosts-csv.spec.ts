import { describe, expect, it } from 'vitest';
import { DEFAULT_ROW_DEFAULTS, parseHostList } from '@ccos/shared/domain';
import { type KnownNode, planCsvAdd } from './hosts-csv';

const none: KnownNode[] = [];
const node = (hostname: string, ip: string | null, more: Partial<KnownNode> = {}): KnownNode => ({ id: `id-${hostname}`, hostname, ip, status: 'READY_TO_INSTALL', origin: 'ADDED', ...more });

describe('planCsvAdd', () => {
  it.each([
    ['columns in order', 'hostname,ip,port,user\nh1,10.0.0.1,2222,core\n', { hostname: 'h1', ip: '10.0.0.1', sshPort: 2222, sshUser: 'core' }],
    ['columns in another order, case and spaces', ' IP , Hostname \n10.0.0.2 , h2\n', { hostname: 'h2', ip: '10.0.0.2', sshPort: 22, sshUser: 'root' }],
    ['quoted fields and empty optional ones', 'hostname,ip,port,user\n"h3","10.0.0.3",,\n', { hostname: 'h3', ip: '10.0.0.3', sshPort: 22, sshUser: 'root' }],
    ['comments, blank lines and CRLF', '# fleet\r\nhostname,ip\r\n\r\nh4,10.0.0.4\r\n', { hostname: 'h4', ip: '10.0.0.4', sshPort: 22, sshUser: 'root' }],
    ['no header, the default column order', 'h5,10.0.0.5,2200\n', { hostname: 'h5', ip: '10.0.0.5', sshPort: 2200, sshUser: 'root' }],
  ])('reads the files the CLI always read with the shared parser: %s', (_name, text, expected) => {
    expect(planCsvAdd(text, none, DEFAULT_ROW_DEFAULTS).rows).toEqual([expect.objectContaining(expected)]);
  });

  it('gives rows without port or user the defaults of --port and --user', () => {
    expect(planCsvAdd('hostname,ip\nh1,10.0.0.1\n', none, { sshPort: 2022, sshUser: 'core' }).rows[0]).toMatchObject({ sshPort: 2022, sshUser: 'core' });
  });

  it('skips the rows the cluster already has under the same name and address, and keeps every other row on its line', () => {
    const text = 'hostname,ip\nh1,10.0.0.1\nh2,10.0.0.2\n\nh3,2001:DB8::3\nh4,10.0.0.4\n';
    const nodes = [node('h1', '10.0.0.1'), node('h3', '2001:db8:0:0:0:0:0:3', { status: 'UNREACHABLE' }), node('h4', '10.0.0.40')];
    const plan = planCsvAdd(text, nodes, DEFAULT_ROW_DEFAULTS);
    expect(plan.skipped.map(({ row, node: known }) => [row.line, row.hostname, known.id])).toEqual([
      [2, 'h1', 'id-h1'],
      [5, 'h3', 'id-h3'],
    ]);
    expect(plan.remaining).toBe(2);
    // What the API gets: the same rows on the same lines, so its problems name the file's lines;
    // h4, the same name at another address, is the API's to refuse.
    expect(parseHostList(plan.list).map(({ row }) => [row.line, row.hostname])).toEqual([
      [3, 'h2'],
      [6, 'h4'],
    ]);
  });

  it.each([
    ['a removed node', node('h1', '10.0.0.1', { status: 'REMOVED' })],
    ['a node discovered in the cluster (a row may take its place)', node('h1', '10.0.0.1', { origin: 'DISCOVERED', status: 'JOINED' })],
    ['a node without a known address', node('h1', null)],
  ])('does not skip a row for %s', (_name, known) => {
    const plan = planCsvAdd('h1,10.0.0.1\n', [known], DEFAULT_ROW_DEFAULTS);
    expect(plan.skipped).toEqual([]);
    expect(plan.remaining).toBe(1);
    expect(plan.list).toBe('h1,10.0.0.1\n');
  });

  it('does not skip a row with a problem of its own, so the API names both lines of a duplicate', () => {
    const plan = planCsvAdd('h1,10.0.0.1\nh1,10.0.0.1\nh2,10.0.0.2,22x\n', [node('h1', '10.0.0.1'), node('h2', '10.0.0.2')], DEFAULT_ROW_DEFAULTS);
    expect(plan.skipped).toEqual([]);
    expect(plan.remaining).toBe(3);
  });
});

import { describe, expect, it } from 'vitest';
import { formatMessage } from '@ccos/shared/messages';
import { type CheckedRow, MAX_BULK_ROWS, checkBulkRows, expandAddressRange, parseHostList } from './bulk-hosts';

const none = { hostnames: new Set<string>(), ips: new Set<string>() };
const problemsOf = (rows: CheckedRow[]) => rows.map((row) => row.problems.map((problem) => `${problem.field}: ${problem.message}`));

describe('parseHostList', () => {
  it('reads CSV with a header in any column order, quoted fields, labels and taints', () => {
    const rows = parseHostList('ip,hostname,labels,taints\n198.18.0.10,w-1,"zone=a;rack=r1","gpu=yes:NoSchedule dedicated:NoExecute"\n');
    expect(rows).toHaveLength(1);
    expect(rows[0].problems).toEqual([]);
    expect(rows[0].row).toEqual({
      line: 2, hostname: 'w-1', ip: '198.18.0.10', sshPort: 22, sshUser: 'root',
      labels: [{ key: 'zone', value: 'a' }, { key: 'rack', value: 'r1' }],
      taints: [{ key: 'gpu', value: 'yes', effect: 'NoSchedule' }, { key: 'dedicated', value: null, effect: 'NoExecute' }],
    });
  });

  it('reads whitespace-separated lines in the default order, skipping blanks and comments, keeping line numbers', () => {
    const rows = parseHostList('# rack 7\nw-1 198.18.0.10\n\nw-2 198.18.0.11 2222 admin\n', { sshPort: 22, sshUser: 'core' });
    expect(rows.map((row) => [row.row.line, row.row.hostname, row.row.ip, row.row.sshPort, row.row.sshUser])).toEqual([
      [2, 'w-1', '198.18.0.10', 22, 'core'],
      [4, 'w-2', '198.18.0.11', 2222, 'admin'],
    ]);
  });

  it('reports a bad port, a taint without effect and too many fields on their row', () => {
    const rows = parseHostList('w-1,198.18.0.10,22x\nw-2,198.18.0.11,22,root,,gpu\nw-3,198.18.0.12,22,root,,,extra');
    expect(problemsOf(rows)).toEqual([
      ['sshPort: "22x" is not a TCP port (1–65535)'],
      [expect.stringMatching(/^taints: taint "gpu" has no effect/)],
      [expect.stringMatching(/^row: has 7 fields/)],
    ]);
  });
});

describe('expandAddressRange', () => {
  it('turns 198.18.0.10-198.18.0.29 with w-{n} into w-1 … w-20', () => {
    const result = expandAddressRange({ range: '198.18.0.10-198.18.0.29', hostnamePattern: 'w-{n}' });
    expect(result.ok).toBe(true);
    const rows = result.ok ? result.rows : [];
    expect(rows).toHaveLength(20);
    expect(rows[0].row).toMatchObject({ hostname: 'w-1', ip: '198.18.0.10', line: 1 });
    expect(rows[19].row).toMatchObject({ hostname: 'w-20', ip: '198.18.0.29', line: 20 });
  });

  it('accepts a short end, {octet}, {ip}, a first number, and crosses an octet boundary', () => {
    const short = expandAddressRange({ range: '10.0.0.254-10.0.1.1', hostnamePattern: 'n{octet}-{ip}', firstNumber: 0 });
    expect(short.ok && short.rows.map((row) => row.row.hostname)).toEqual(['n254-10-0-0-254', 'n255-10-0-0-255', 'n0-10-0-1-0', 'n1-10-0-1-1']);
    const tail = expandAddressRange({ range: '198.18.0.10-12', hostnamePattern: 'w-{n}', firstNumber: 7 });
    expect(tail.ok && tail.rows.map((row) => `${row.row.hostname}@${row.row.ip}`)).toEqual(['w-7@198.18.0.10', 'w-8@198.18.0.11', 'w-9@198.18.0.12']);
  });

  it.each([
    ['198.18.0.10', 'w-{n}', 'not an address range', '“198.18.0.10”不是地址范围，例如 198.18.0.10-198.18.0.29'],
    ['198.18.0.29-198.18.0.10', 'w-{n}', 'ends (198.18.0.10) before it starts', '范围的结束地址（198.18.0.10）在起始地址（198.18.0.29）之前'],
    ['198.18.0.300-198.18.0.301', 'w-{n}', 'does not have two IPv4 addresses', '“198.18.0.300-198.18.0.301”不是两个 IPv4 地址'],
    ['10.0.0.0-10.0.2.0', 'w-{n}', 'at most 256', '范围包含 513 个地址；一次请求最多允许 256 个'],
    ['198.18.0.10-198.18.0.11', 'worker', 'needs {n}', '主机名模式需要包含 {n}、{octet} 或 {ip}，让每个地址都有自己的名称'],
    ['198.18.0.10-198.18.0.11', 'w-{x}', 'unknown placeholder "{x}"', '主机名模式含有未知的占位符“{x}”（请使用 {n}、{octet} 或 {ip}）'],
  ])('refuses %s with %s', (range, hostnamePattern, message, chinese) => {
    const result = expandAddressRange({ range, hostnamePattern });
    expect(result.ok ? '' : result.problem).toContain(message);
    expect(result.ok ? '' : formatMessage('zh-CN', result.coded.code, result.coded.params)).toBe(chinese);
  });

  it('words the range problems exactly as before in English', () => {
    const tooLarge = expandAddressRange({ range: '10.0.0.0-10.0.255.255', hostnamePattern: 'w-{n}' });
    expect(tooLarge.ok ? '' : tooLarge.problem).toBe('the range spans 65536 addresses; at most 256 are allowed in one request');
    const placeholder = expandAddressRange({ range: '198.18.0.10-198.18.0.11', hostnamePattern: 'w-{x}' });
    expect(placeholder.ok ? '' : placeholder.problem).toBe('the hostname pattern has an unknown placeholder "{x}" (use {n}, {octet} or {ip})');
    const firstNumber = expandAddressRange({ range: '198.18.0.10-198.18.0.11', hostnamePattern: 'w-{n}', firstNumber: -1 });
    expect(firstNumber.ok ? '' : firstNumber.problem).toBe('the first number must be a whole number from 0 to 1000000');
  });
});

describe('checkBulkRows', () => {
  it('reports every problem of every row at once: bad IP, duplicates in the list and in the cluster, hostile strings', () => {
    const rows = parseHostList([
      'w-1,198.18.0.10',
      'w-2,198.18.0.300',
      'w-1,198.18.0.12',
      'w-4,198.18.0.10',
      '$(reboot),198.18.0.14,22,root;id',
      'w-6,198.18.0.15,22,root,kubernetes.io/role=x',
      'w-old,198.18.0.16',
      'w-8,198.18.0.99',
      'w-9,198.18.0.17,,,,bad!key:Sometimes',
    ].join('\n'));
    const checked = checkBulkRows(rows, { hostnames: new Set(['w-old']), ips: new Set(['198.18.0.99']) });
    expect(problemsOf(checked)).toEqual([
      ['hostname: "w-1" is also on line 3 of this list', 'ip: 198.18.0.10 is also on line 4 of this list'],
      ['ip: "198.18.0.300" is not an IPv4 or IPv6 address'],
      ['hostname: "w-1" is also on line 1 of this list'],
      ['ip: 198.18.0.10 is also on line 1 of this list'],
      [expect.stringMatching(/^hostname: "\$\(reboot\)" is not a valid RFC 1123 label/), expect.stringMatching(/^sshUser: "root;id" is not a valid user name/)],
      [expect.stringMatching(/^labels: label key "kubernetes.io\/role" is in the kubernetes.io namespace/)],
      ['hostname: "w-old" is already a node of this cluster'],
      ['ip: 198.18.0.99 is already used by a node of this cluster'],
      [expect.stringMatching(/^taints: taint key "bad!key" is invalid/)],
    ]);
  });

  it('passes clean rows untouched and refuses a list over the limit on every row', () => {
    const clean = parseHostList('w-1 198.18.0.10\nw-2 198.18.0.11');
    expect(problemsOf(checkBulkRows(clean, none))).toEqual([[], []]);
    const many = expandAddressRange({ range: '10.0.0.0-10.0.0.255', hostnamePattern: 'a{n}' });
    const more = expandAddressRange({ range: '10.0.1.0-10.0.1.255', hostnamePattern: 'b{n}' });
    const rows = [...(many.ok ? many.rows : []), ...(more.ok ? more.rows : [])].map((row, index) => ({ ...row, row: { ...row.row, line: index + 1 } }));
    expect(rows.length).toBeGreaterThan(MAX_BULK_ROWS);
    expect(checkBulkRows(rows, none)[0].problems[0].message).toContain(`at most ${MAX_BULK_ROWS}`);
  });
});

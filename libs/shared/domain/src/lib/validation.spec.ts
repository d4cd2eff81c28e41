import { describe, expect, it } from 'vitest';
import { formatMessage } from '@ccos/shared/messages';
import {
  checkApiServerUrl, checkClusterName, checkHostname, checkIp, checkLabels, checkNodeLabels, checkPassword, checkPort, checkSshUser, checkTaints, checkUsername, kubeletMaySetLabel,
  type TaintEffect,
} from './validation';

describe('checkHostname (RFC 1123)', () => {
  it.each(['worker-1', 'w1.example.com', 'a', '0node', `${'a'.repeat(63)}.b`])('accepts %s', (name) => {
    expect(checkHostname(name)).toBeNull();
  });
  it.each([
    ['', 'must not be empty'],
    ['Worker', 'not a valid RFC 1123 label'],
    ['-worker', 'not a valid RFC 1123 label'],
    ['worker-', 'not a valid RFC 1123 label'],
    ['w..x', 'not a valid RFC 1123 label'],
    ['a'.repeat(64), 'not a valid RFC 1123 label'],
    [`${'a.'.repeat(127)}a`, 'at most 253'],
    ['w1;reboot', 'not a valid RFC 1123 label'],
    ['$(id)', 'not a valid RFC 1123 label'],
    ['w1\nw2', '\\n'],
  ])('refuses %j with %s', (name, message) => {
    expect(checkHostname(name)?.message).toContain(message);
  });
});

describe('checkIp', () => {
  it.each(['198.18.0.11', '0.0.0.0', '255.255.255.255', '::1', '::', 'fe80::1', '2001:db8::8a2e:370:7334', '1:2:3:4:5:6:7:8', '::ffff:192.0.2.1', '1::'])(
    'accepts %s',
    (ip) => {
      expect(checkIp(ip)).toBeNull();
    },
  );
  it.each(['256.1.1.1', '1.2.3', '01.2.3.4', '1.2.3.4.5', '1:2:3:4:5:6:7:8:9', '1::2::3', 'fe80::1%eth0', 'localhost', '1.2.3.4; rm -rf /', '', ':::'])(
    'refuses %j',
    (ip) => {
      expect(checkIp(ip)?.message).toMatch(/is not an IPv4 or IPv6 address/);
    },
  );
});

describe('other inputs', () => {
  it('checks ports', () => {
    expect(checkPort(22)).toBeNull();
    expect(checkPort(0)?.message).toContain('not a TCP port');
    expect(checkPort(65536)?.message).toContain('not a TCP port');
    expect(checkPort(22.5)?.message).toContain('not a TCP port');
  });

  it('checks console user names and password lengths', () => {
    expect(checkUsername('ops.lead-1')).toBeNull();
    for (const bad of ['a', 'Admin', '1ops', 'ops lead', 'x'.repeat(33), 'ops;id']) {
      expect(checkUsername(bad)?.message).toContain('must be 2–32 lower-case letters');
    }
    expect(checkPassword('x'.repeat(12))).toBeNull();
    expect(checkPassword('x'.repeat(11))?.message).toBe('must be 12 to 256 characters long');
    expect(checkPassword('x'.repeat(257))?.message).toBe('must be 12 to 256 characters long');
  });

  it('checks SSH user names and refuses shell syntax', () => {
    expect(checkSshUser('root')).toBeNull();
    expect(checkSshUser('core')).toBeNull();
    for (const hostile of ['root;id', 'a b', '$(id)', '`id`', '-oProxyCommand=x', 'x'.repeat(40), 'root\n']) {
      expect(checkSshUser(hostile)?.message).toContain('not a valid user name');
    }
  });

  it('checks labels as Kubernetes does', () => {
    expect(checkLabels([{ key: 'node-role.kubernetes.io/worker', value: '' }, { key: 'disk-type', value: 'ssd' }])).toBeNull();
    expect(checkLabels([{ key: 'bad key', value: 'x' }])?.message).toContain('label key "bad key" is invalid');
    expect(checkLabels([{ key: 'Bad_Prefix/x', value: 'x' }])?.message).toContain('invalid prefix');
    expect(checkLabels([{ key: 'zone', value: 'a;reboot' }])?.message).toContain('label value "a;reboot" is invalid');
    expect(checkLabels([{ key: 'zone', value: 'a' }, { key: 'zone', value: 'b' }])?.message).toContain('appears twice');
  });

  it('refuses labels a kubelet may not set on its own Node', () => {
    expect(checkNodeLabels([{ key: 'node-role.kubernetes.io/worker', value: '' }, { key: 'topology.kubernetes.io/zone', value: 'a' }, { key: 'example.com/team', value: 'x' }])).toBeNull();
    expect(checkNodeLabels([{ key: 'kubernetes.io/role', value: 'worker' }])?.message).toContain('label key "kubernetes.io/role" is in the kubernetes.io namespace');
    expect(checkNodeLabels([{ key: 'node-restriction.kubernetes.io/x', value: 'y' }])?.message).toContain('may not set');
    expect(kubeletMaySetLabel('sub.k8s.io/x')).toBe(false);
  });

  it('checks taints', () => {
    expect(checkTaints([{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }])).toBeNull();
    expect(checkTaints([{ key: 'dedicated', effect: 'Sometimes' as TaintEffect }])?.message).toContain('must be one of NoSchedule');
    expect(checkTaints([{ key: '$x', effect: 'NoSchedule' }])?.message).toContain('taint key "$x" is invalid');
  });

  it('checks cluster names and API server URLs', () => {
    expect(checkClusterName('prod-east')).toBeNull();
    expect(checkClusterName('Prod East')?.message).toContain('not a valid name');
    expect(checkApiServerUrl('https://api.example.com:6443')).toBeNull();
    expect(checkApiServerUrl('https://198.18.0.2:6443/')).toBeNull();
    expect(checkApiServerUrl('https://[2001:db8::1]:6443')).toBeNull();
    expect(checkApiServerUrl('ftp://api.example.com')?.message).toContain('not an API server URL');
    expect(checkApiServerUrl('https://api.example.com:99999')?.message).toContain('invalid port');
    expect(checkApiServerUrl('https://-bad-:6443')?.message).toContain('invalid host');
  });
});

describe('problems are coded, so clients word them in their language', () => {
  it.each([
    [checkHostname('Worker'), '“Worker”不是有效的 RFC 1123 标签（小写字母、数字和“-”，1–63 个字符，以字母或数字开头和结尾）'],
    [checkIp('1.2.3'), '“1.2.3”不是 IPv4 或 IPv6 地址'],
    [checkTaints([{ key: '$x', effect: 'NoSchedule' }]), '污点键“$x”无效（字母数字、“-”、“_”、“.”，最多 63 个字符，以字母或数字开头和结尾）'],
    [checkLabels([{ key: 'zone', value: 'a' }, { key: 'zone', value: 'b' }]), '标签键“zone”出现了两次'],
    [checkPassword('short'), '长度必须为 12 到 256 个字符'],
  ])('%#: the Chinese text names no API field', (problem, chinese) => {
    expect(problem && formatMessage('zh-CN', problem.code, problem.params)).toBe(chinese);
  });
});

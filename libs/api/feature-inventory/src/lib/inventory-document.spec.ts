import { describe, expect, it } from 'vitest';
import { formatMessage, type Message } from '@ccos/shared/messages';
import { parseInventory } from './inventory-document';

const HEAD = 'apiVersion: ccos-scaler.io/v1\nkind: Inventory\ncluster: lab\n';

function problemsOf(text: string, locale: 'en' | 'zh-CN' = 'en'): string[] {
  const parsed = parseInventory(text);
  expect(parsed.ok).toBe(false);
  return parsed.ok ? [] : parsed.problems.map((problem: Message) => formatMessage(locale, problem.code, problem.params));
}

describe('parseInventory', () => {
  it('reads hosts with defaults, sorted labels and taints', () => {
    const parsed = parseInventory(`${HEAD}defaults: {sshUser: core, credential: {privateKeyFile: /keys/id}}
hosts:
  - {hostname: w1, ip: 198.18.0.10, labels: {zone: b, rack: r1}, taints: [{key: gpu, effect: NoSchedule}]}
  - {hostname: w2, ip: 198.18.0.11, sshPort: 2222, credential: {passwordEnv: W2_PASSWORD}}
  - {hostname: w3, remove: true}
`);
    expect(parsed).toEqual({
      ok: true,
      inventory: {
        cluster: 'lab',
        pools: [],
        hosts: [
          { hostname: 'w1', ip: '198.18.0.10', sshPort: 22, sshUser: 'core', credential: { privateKeyFile: '/keys/id' }, labels: [{ key: 'rack', value: 'r1' }, { key: 'zone', value: 'b' }], taints: [{ key: 'gpu', value: null, effect: 'NoSchedule' }], pool: null, remove: false },
          { hostname: 'w2', ip: '198.18.0.11', sshPort: 2222, sshUser: 'core', credential: { passwordEnv: 'W2_PASSWORD' }, labels: [], taints: [], pool: null, remove: false },
          { hostname: 'w3', ip: null, sshPort: 22, sshUser: 'core', credential: { privateKeyFile: '/keys/id' }, labels: [], taints: [], pool: null, remove: true },
        ],
      },
    });
  });

  it('refuses an inline password first, naming the host and where to put it instead', () => {
    const problems = problemsOf(`${HEAD}hosts:\n  - {hostname: w1, ip: 198.18.0.10, password: hunter2, color: red}\n`);
    expect(problems[0]).toBe('hosts[0] (w1): "password" would put a secret into the file: name where the applying machine reads it instead (credential.passwordFile, passwordEnv, privateKeyFile or privateKeyEnv)');
    expect(problems[1]).toBe('hosts[0] (w1): unknown field "color"');
    expect(problems.join('\n')).not.toContain('hunter2');
    expect(problemsOf(`${HEAD}hosts:\n  - {hostname: w1, ip: 198.18.0.10, credential: {privateKey: x}}\n`)[0]).toContain('hosts[0].credential (w1): "privateKey" would put a secret');
  });

  it('names an unknown field, a wrong kind and a missing field', () => {
    expect(problemsOf(`${HEAD}hosts: []\nlables: {}\n`)).toEqual(['/: unknown field "lables"']);
    expect(problemsOf('apiVersion: v2\nkind: Inventory\ncluster: lab\nhosts: []\n')).toEqual(['apiVersion: must be ccos-scaler.io/v1']);
    expect(problemsOf(`${HEAD}hosts:\n  - {ip: 198.18.0.10}\n`)).toEqual(['hosts[0]: the required field "hostname" is missing']);
    expect(problemsOf(`${HEAD}hosts:\n  - {hostname: w1, ip: 198.18.0.10, sshPort: "22"}\n`)).toEqual(['hosts[0].sshPort (w1): must be of type integer']);
  });

  it('refuses a host or an address named twice, and a YAML key given twice', () => {
    expect(problemsOf(`${HEAD}hosts:\n  - {hostname: w1, ip: 198.18.0.10}\n  - {hostname: w1, ip: 198.18.0.11}\n  - {hostname: w2, ip: 198.18.0.10}\n`)).toEqual([
      'hosts[1].hostname (w1): this host is already named at hosts[0]',
      'hosts[2].ip (w2): the address 198.18.0.10 is already given at hosts[0]',
    ]);
    expect(problemsOf(`${HEAD}hosts: []\ncluster: other\n`)).toEqual(['a key appears twice in one mapping (line 5, column 1)']);
  });

  it('checks names, addresses, labels and credentials by addNode\'s rules, in Chinese too', () => {
    const text = `${HEAD}hosts:
  - {hostname: W_1, ip: 198.18.0.300}
  - {hostname: w2, ip: 198.18.0.12, labels: {kubernetes.io/arch: amd64, "bad key!": x}, credential: {passwordFile: a, passwordEnv: B}}
  - {hostname: w3}
`;
    const problems = problemsOf(text);
    expect(problems).toHaveLength(5);
    expect(problems[0]).toMatch(/^hosts\[0\]\.hostname \(W_1\): /);
    expect(problems[1]).toMatch(/^hosts\[0\]\.ip \(W_1\): /);
    expect(problems[3]).toBe('hosts[1].credential (w2): name exactly one of passwordFile, passwordEnv, privateKeyFile, privateKeyEnv');
    expect(problems[4]).toBe('hosts[2].ip (w3): an ip is required unless remove is true');
    expect(problemsOf(text, 'zh-CN')[4]).toBe('hosts[2].ip (w3)：除非 remove 为 true，否则必须填写 ip');
  });

  it('answers text that is no YAML with where it broke', () => {
    expect(problemsOf('hosts: [\n')[0]).toMatch(/^the file is not valid YAML or JSON \(line \d+, column \d+\)$/);
  });
});

describe('parseInventory: pools', () => {
  it('reads a pool with createNodeGroup\'s defaults and a spare that names it', () => {
    const parsed = parseInventory(`${HEAD}pools:\n  - {name: gpu, maxSize: 3, profile: {cpuCores: 8, memoryGiB: 32}, labels: {gpu: a100}}\nhosts:\n  - {hostname: s1, ip: 198.18.0.21, pool: gpu}\n`);
    expect(parsed.ok && parsed.inventory.pools).toEqual([
      { name: 'gpu', minSize: 0, maxSize: 3, profile: { cpuCores: 8, memoryBytes: 32 * 2 ** 30, ephemeralStorageBytes: 20 * 2 ** 30, maxPods: 110, arch: 'amd64' }, labels: [{ key: 'gpu', value: 'a100' }], taints: [] },
    ]);
    expect(parsed.ok && parsed.inventory.hosts[0].pool).toBe('gpu');
  });

  it('refuses a pool named twice, a spare of an unknown pool, and a spare with labels of its own', () => {
    expect(problemsOf(`${HEAD}pools:\n  - {name: gpu, maxSize: 3, profile: {cpuCores: 8, memoryGiB: 32}}\n  - {name: gpu, minSize: 4, maxSize: 3, profile: {cpuCores: 8, memoryGiB: 32}}\nhosts:\n  - {hostname: s1, ip: 198.18.0.21, pool: cpu}\n  - {hostname: s2, ip: 198.18.0.22, pool: gpu, labels: {a: b}}\n`)).toEqual([
      'pools[1].name (gpu): this pool is already defined at pools[0]',
      expect.stringMatching(/^pools\[1\]\.maxSize \(gpu\): /),
      'hosts[0].pool (s1): no pool "cpu" is defined under pools',
      'hosts[1].pool (s2): a spare of pool gpu takes the pool\'s labels and taints: give them to the pool, not the host',
    ]);
  });
});

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import { SHIPPED_RBAC, shippedIdentityKubeconfig } from '@ccos/api/data-access-kube/testing';
import { RegisterClusterDocument } from '@ccos/shared/api-schema';
import { type KubeSim, startKubeSim } from '@ccos/tools/kube-sim';
import { type ApiProcess, E2E_ADMIN_PASSWORD, startApiProcess } from '../support/api-process';
import { CLI, type Run, runProcess } from '../support/cli-process';
import { KUBECTL } from '../support/kubectl-drain';

/**
 * The built `ccos-scaler` against the built API and a kube-sim that has deploy/base/rbac without
 * the bootstrap identities' namespace (and so without their Role and its binding): `clusters check`
 * says so with ✗, the fix and exit 1 (in English, Chinese and JSON); `clusters prepare` piped into
 * the real `kubectl apply -f -` fixes it, and the check then passes with exit 0.
 * Needs `npx nx run-many -t build -p api cli`.
 */
const BOOTSTRAP_NAMESPACE = 'ccos-scaler-bootstrap';

function run(command: string, args: readonly string[], env: Record<string, string>, input = ''): Promise<Run> {
  return runProcess(command, args, { env, input });
}

const withoutBootstrapNamespace = parseAllDocuments(SHIPPED_RBAC)
  .map((document) => document.toJS() as { kind: string; metadata: { name: string; namespace?: string } })
  .filter((object) => object.metadata.namespace !== BOOTSTRAP_NAMESPACE && !(object.kind === 'Namespace' && object.metadata.name === BOOTSTRAP_NAMESPACE))
  .map((object) => stringify(object))
  .join('---\n');

describe('ccos-scaler clusters check, prepare and limit', () => {
  let sim: KubeSim;
  let api: ApiProcess;
  let dir = '';
  let env: Record<string, string>;
  let adminKubeconfig = '';

  const cli = (args: readonly string[], extra: Record<string, string> = {}) => run(process.execPath, [CLI, ...args], { ...env, ...extra });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ccos-cluster-checks-'));
    sim = await startKubeSim({ seed: withoutBootstrapNamespace });
    adminKubeconfig = join(dir, 'admin.kubeconfig');
    await writeFile(adminKubeconfig, sim.kubeconfig, { mode: 0o600 });
    api = await startApiProcess({ env: { ALLOW_CLUSTER_ADDRESSES: 'loopback' } });
    const admin = await api.login();
    const registered = await api.gql(RegisterClusterDocument, { input: { name: 'edge', apiServerUrl: sim.url, vip: '198.18.0.2', kubeconfig: shippedIdentityKubeconfig(sim), csrAutoApprove: false } }, admin);
    expect(registered.errors).toBeUndefined();
    const passwordFile = join(dir, 'password');
    await writeFile(passwordFile, E2E_ADMIN_PASSWORD, { mode: 0o600 });
    env = { HOME: dir, LANG: 'en_US.UTF-8', CCOS_SERVER: api.url };
    expect((await cli(['login', '--password-file', passwordFile])).code).toBe(0);
  });

  afterAll(async () => {
    await api?.stop();
    await sim?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('names the missing namespace with ✗ and its fix, exits 1, and prepare + kubectl apply makes every check pass', async () => {
    const failing = await cli(['clusters', 'check', '--cluster', 'edge']);
    expect(failing.code, failing.stderr).toBe(1);
    expect(failing.stdout).toMatch(/^✓ API_ACCESS: the API server answers; the service is system:serviceaccount:ccos-scaler:ccos-scaler there$/m);
    expect(failing.stdout).toMatch(new RegExp(`^✗ BOOTSTRAP_NAMESPACE: system:serviceaccount:ccos-scaler:ccos-scaler may not create ServiceAccounts in namespace ${BOOTSTRAP_NAMESPACE} `, 'm'));
    expect(failing.stdout).toMatch(/^✗ SERVICE_PERMISSIONS: .*lacks 4 permissions the service uses: create serviceaccounts -n ccos-scaler-bootstrap/m);
    expect(failing.stdout).toContain(`    fix:\n      apiVersion: v1\n      kind: Namespace\n      metadata:\n        name: ${BOOTSTRAP_NAMESPACE}`);
    expect(failing.stdout).toContain('    fix:\n      kubectl apply -k deploy/base/rbac');
    expect(failing.stderr.trim()).toBe('Cluster edge is not ready for installs: 2 check(s) failed.');

    const chinese = await cli(['clusters', 'check', '--cluster', 'edge'], { LANG: 'zh_CN.UTF-8' });
    expect(chinese.code).toBe(1);
    expect(chinese.stdout).toContain(`✗ BOOTSTRAP_NAMESPACE: system:serviceaccount:ccos-scaler:ccos-scaler 无权在命名空间 ${BOOTSTRAP_NAMESPACE} 中创建 ServiceAccount`);
    expect(chinese.stderr.trim()).toBe('集群 edge 尚不能安装节点：2 项检查未通过。');

    const json = await cli(['clusters', 'check', '--cluster', 'edge', '--output', 'json']);
    expect(json.code).toBe(1);
    const checks = JSON.parse(json.stdout) as Array<{ name: string; ok: boolean; reasonCode: string; fix: string | null }>;
    expect(checks.map((check) => [check.name, check.ok, check.reasonCode])).toEqual([
      ['API_ACCESS', true, 'clusterCheck.apiAccess.ok'],
      ['BOOTSTRAP_NAMESPACE', false, 'clusterCheck.bootstrap.forbidden'],
      ['SERVICE_PERMISSIONS', false, 'clusterCheck.permissions.missing'],
    ]);

    const prepared = await cli(['clusters', 'prepare', '--cluster', 'edge']);
    expect(prepared.code, prepared.stderr).toBe(0);
    expect(`${prepared.stdout.trimEnd()}\n`).toBe(checks[1]?.fix);
    const applied = await run(KUBECTL, ['--kubeconfig', adminKubeconfig, 'apply', '-f', '-'], { HOME: dir }, prepared.stdout);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toContain(`namespace/${BOOTSTRAP_NAMESPACE} created`);

    const passing = await cli(['clusters', 'check', '--cluster', 'edge']);
    expect(passing.code, passing.stdout + passing.stderr).toBe(0);
    expect(passing.stdout.split('\n').filter((line) => /^[✓✗]/.test(line)).map((line) => line.slice(0, 1))).toEqual(['✓', '✓', '✓', '✓']);
    expect(passing.stdout).toContain('Cluster edge is ready for installs.');
    expect(passing.stdout).not.toContain('fix:');
  });

  it('sets how many installs run at once, refuses a number outside 1–1000 and changes nothing then', async () => {
    const refused = await cli(['clusters', 'limit', '--cluster', 'edge', '--installs-at-once', '0']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('installs at once must be a whole number from 1 to 1000');
    const refusedZh = await cli(['clusters', 'limit', '--cluster', 'edge', '--installs-at-once', '1001'], { LANG: 'zh_CN.UTF-8' });
    expect(refusedZh.stderr).toContain('同时安装数必须是 1 到 1000 之间的整数');
    const missing = await cli(['clusters', 'limit', '--cluster', 'edge']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('give --installs-at-once with a number');

    const listed = await cli(['clusters', 'list']);
    expect(listed.stdout).toMatch(/INSTALLS AT ONCE\s*\n.*\bedge\b.*\s50\s*$/m);
    const set = await cli(['clusters', 'limit', '--cluster', 'edge', '--installs-at-once', '20']);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout.trim()).toBe('Cluster edge now runs at most 20 installs at once; more wait their turn.');
    const json = await cli(['clusters', 'list', '--output', 'json']);
    expect((JSON.parse(json.stdout) as Array<{ name: string; installsAtOnce: number }>).map((cluster) => [cluster.name, cluster.installsAtOnce])).toEqual([['edge', 20]]);
  });
});

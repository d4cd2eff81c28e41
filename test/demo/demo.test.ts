import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LAB_LOCK_TIMEOUT_MS, startLab, subnetContains, type Lab, type LabDescription, type LabHost } from '@ccos/tools/lab';
import { labTraces, netnsInodes } from '../lab/lab-process';
import { systemSsh } from '../lab/ssh-session';
import { freePort } from '../support/api-process';

/**
 * `npm run demo` next to a test's own lab: it comes up on a lab of its own, its cluster
 * holds the sample workloads, whose pods land on the node one installs through the demo's
 * service, so the removal preview lists them and the drain evicts what it may and is
 * blocked by the budget; Ctrl+C removes the demo's lab and nothing of the test's.
 * Needs `npx nx run-many -t build -p api console boot-worker`.
 */
interface Gql {
  data?: Record<string, unknown> | null;
  errors?: Array<{ message: string }>;
}

interface PodJson {
  metadata: { name: string; namespace: string };
  spec: { nodeName?: string };
  status: { phase?: string; conditions?: Array<{ type: string; status: string }> };
}

/** A generated pod name's suffix. */
const SUFFIX = /-[bcdfghjklmnpqrstvwxz2456789]{5}$/;
/** The sample pods on the first node, by name. */
const SAMPLE_PODS = [/^monitoring\/node-exporter-\w{5}$/, /^shop\/cache-5f7c8d9b4-\w{5}$/, /^shop\/debug-shell$/, /^shop\/web-6d8f9c7b5d-\w{5}$/, /^shop\/web-6d8f9c7b5d-\w{5}$/];

describe('npm run demo', () => {
  let testLab: Lab | undefined;

  afterAll(async () => {
    await testLab?.stop();
  });

  it('runs next to a test lab, puts its sample workloads on the node one installs, and shows the drain blocked by the budget', async () => {
    testLab = await startLab({ hosts: 1, name: 'test/demo' });
    const testHost = testLab.hosts[0] as LabHost;
    const testHostname = async () => (await systemSsh(testHost, { identityFile: (testLab as Lab).privateKeyPath }, 'hostname')).stdout;

    const dataDir = await mkdtemp(join(tmpdir(), 'ccos-demo-'));
    const port = await freePort('0.0.0.0');
    const demo = spawn('npx', ['tsx', 'tools/demo/src/main.ts'], {
      env: { ...process.env, PORT: String(port), DEMO_DATA_DIR: dataDir, DEMO_HOSTS: '2', ADMIN_PASSWORD: 'demo-test-password', DEMO_POD_READY_SECONDS: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group, so the test can send SIGINT to all of it as Ctrl+C does in a terminal.
      detached: true,
    });
    let output = '';
    demo.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    demo.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const kubectl = (...args: string[]) => new Promise<string>((resolve, reject) => {
      execFile('kubectl', ['--kubeconfig', join(dataDir, 'kubeconfig'), ...args], { timeout: 20_000 }, (error, stdout, stderr) => (error ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr}`)) : resolve(stdout)));
    });
    let demoLab: LabDescription | undefined;
    let demoInodes: string[] = [];
    try {
      // The demo may first wait for the lab lock (another start on this machine), and says so.
      const started = Date.now();
      while (!output.includes('demo is up') && Date.now() - started < LAB_LOCK_TIMEOUT_MS + 150_000 && demo.exitCode === null) {
        await new Promise((wake) => setTimeout(wake, 200));
      }
      expect(output, output).toContain('demo is up');
      const lab = JSON.parse(await readFile(join(dataDir, 'lab.json'), 'utf8')) as LabDescription;
      demoLab = lab;
      demoInodes = netnsInodes(lab);
      const [h1] = lab.hosts as [LabHost, LabHost];
      expect(lab.id).not.toBe(testLab.id);
      expect(subnetContains(lab.subnet, testHost.ip)).toBe(false);
      expect(output).toContain(`lab ${lab.id} on ${lab.subnet}`);
      expect(output).toMatch(new RegExp(`h1\\s+${h1.ip.replaceAll('.', '\\.')}\\s+root / ${h1.password}`));

      const gql = async (query: string, variables: Record<string, unknown> = {}, token?: string): Promise<Gql> =>
        (await (await fetch(`http://127.0.0.1:${port}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
          body: JSON.stringify({ query, variables }),
        })).json()) as Gql;
      const login = await gql('mutation($p: String!) { login(username: "admin", password: $p) { token } }', { p: 'demo-test-password' });
      const token = (login.data?.['login'] as { token: string }).token;
      const call = async <T>(query: string, variables: Record<string, unknown> = {}): Promise<T> => {
        const result = await gql(query, variables, token);
        expect(result.errors, JSON.stringify(result.errors)).toBeUndefined();
        return result.data as T;
      };
      const { clusters } = await call<{ clusters: Array<{ id: string; name: string; vip: string }> }>('{ clusters { id name vip } }');
      expect(clusters.map(({ name, vip }) => ({ name, vip }))).toEqual([{ name: 'demo', vip: lab.vip }]);
      const clusterId = clusters[0]?.id ?? '';

      // The sample workloads are there before any node is; no pod can run yet.
      const names = (kind: string) => kubectl('get', kind, '-A', '-o', 'jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name} {end}').then((text) => text.trim().split(' ').sort());
      expect(await names('deployments')).toEqual(['shop/cache', 'shop/web']);
      expect(await names('replicasets')).toEqual(['shop/cache-5f7c8d9b4', 'shop/web-6d8f9c7b5d']);
      expect(await names('poddisruptionbudgets')).toEqual(['shop/web']);
      expect(await names('daemonsets')).toEqual(['monitoring/node-exporter']);
      expect(await names('pods')).toEqual(['']);

      // Install h1 through the demo's service, approving its CSRs as an operator does.
      const { addNode } = await call<{ addNode: { id: string } }>('mutation($input: AddNodeInput!) { addNode(input: $input) { id } }', {
        input: { clusterId, hostname: h1.hostname, ip: h1.ip, sshUser: h1.user, password: h1.password },
      });
      const status = async () => (await call<{ node: { status: string; statusReason: string | null } }>('query($id: ID!) { node(id: $id) { status statusReason } }', { id: addNode.id })).node;
      await expect.poll(async () => (await status()).status, { timeout: 120_000, interval: 500 }).toBe('READY_TO_INSTALL');
      await call('mutation($id: ID!) { installNode(nodeId: $id) { id } }', { id: addNode.id });
      const installStarted = Date.now();
      while ((await status()).status !== 'JOINED') {
        expect(['INSTALL_FAILED', 'STALLED'], JSON.stringify(await status())).not.toContain((await status()).status);
        expect(Date.now() - installStarted, `install of h1 did not finish:\n${output.slice(-3000)}`).toBeLessThan(240_000);
        const { csrs } = await call<{ csrs: Array<{ name: string }> }>('query($c: ID!) { csrs(clusterId: $c, pendingOnly: true) { name } }', { c: clusterId });
        for (const csr of csrs) {
          await gql('mutation($c: ID!, $n: String!) { approveCsr(clusterId: $c, name: $n) { name } }', { c: clusterId, n: csr.name }, token);
        }
        await new Promise((wake) => setTimeout(wake, 500));
      }

      // Once h1 is Ready, its pods are placed on it and turn Running and Ready.
      const podsOnH1 = async () => ((JSON.parse(await kubectl('get', 'pods', '-A', '-o', 'json')) as { items: PodJson[] }).items)
        .filter((pod) => pod.spec.nodeName === h1.hostname && pod.status.phase === 'Running' && pod.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
        .map((pod) => `${pod.metadata.namespace}/${pod.metadata.name}`)
        .sort();
      await expect.poll(async () => (await podsOnH1()).length, { timeout: 30_000, interval: 500 }).toBe(SAMPLE_PODS.length);
      const pods = await podsOnH1();
      SAMPLE_PODS.forEach((pattern, index) => expect(pods[index]).toMatch(pattern));
      expect(output).toMatch(/workloads: placed shop\/debug-shell \(no controller: nothing recreates it\) on h1/);

      // The removal preview sees every kind of pod, and the budget that will hold the drain.
      const options = { force: true, deleteEmptyDirData: true, ignoreDaemonSets: true, allowLastWorker: true, timeoutSeconds: 20 };
      const { removalPreview } = await call<{ removalPreview: { allowed: boolean; pods: Array<{ pod: string; podClass: string; action: string; pdbs: string[] }>; budgets: Array<{ name: string; namespace: string; blocks: boolean; disruptionsAllowed: number }> } }>(
        'query($id: ID!, $o: RemoveNodeInput) { removalPreview(nodeId: $id, options: $o) { allowed pods { pod podClass action pdbs } budgets { name namespace blocks disruptionsAllowed } } }',
        { id: addNode.id, o: options },
      );
      expect(removalPreview.allowed).toBe(true);
      const previewed = Object.fromEntries(removalPreview.pods.map(({ pod, podClass, action, pdbs }) => [pod.replace(SUFFIX, ''), { podClass, action, pdbs }]));
      expect(previewed).toEqual({
        'shop/web-6d8f9c7b5d': { podClass: 'MANAGED', action: 'EVICT', pdbs: ['web'] },
        'shop/cache-5f7c8d9b4': { podClass: 'LOCAL_STORAGE', action: 'EVICT', pdbs: [] },
        'shop/debug-shell': { podClass: 'UNMANAGED', action: 'EVICT', pdbs: [] },
        'monitoring/node-exporter': { podClass: 'DAEMONSET', action: 'SKIP', pdbs: [] },
      });
      expect(removalPreview.budgets).toEqual([{ name: 'web', namespace: 'shop', blocks: true, disruptionsAllowed: 1 }]);

      // The drain evicts one web pod, the cache and the shell; the budget keeps the last web pod.
      const { removeNode } = await call<{ removeNode: { id: string } }>('mutation($id: ID!, $o: RemoveNodeInput) { removeNode(nodeId: $id, options: $o) { id } }', { id: addNode.id, o: options });
      const run = async () => (await call<{ removalRun: { status: string; nodeStatus: string; blocking: Array<{ pod: string; pdb: string | null }>; events: Array<{ kind: string; pod: string | null; pdb: string | null }> } }>(
        'query($id: ID!) { removalRun(id: $id) { status nodeStatus blocking { pod pdb } events { kind pod pdb } } }', { id: removeNode.id },
      )).removalRun;
      await expect.poll(async () => (await run()).status, { timeout: 60_000, interval: 500 }).toBe('FAILED');
      const finished = await run();
      expect(finished.nodeStatus).toBe('DRAIN_FAILED');
      const evicted = finished.events.filter((event) => event.kind === 'POD_EVICTED').map((event) => (event.pod ?? '').replace(SUFFIX, '')).sort();
      expect(evicted).toEqual(['shop/cache-5f7c8d9b4', 'shop/debug-shell', 'shop/web-6d8f9c7b5d']);
      expect(finished.events.some((event) => event.kind === 'POD_BLOCKED' && event.pdb === 'web')).toBe(true);
      expect(finished.blocking).toEqual([{ pod: expect.stringMatching(/^shop\/web-6d8f9c7b5d-\w{5}$/), pdb: 'web' }]);
      expect(output).toMatch(/workloads: shop\/web-6d8f9c7b5d wants 2 pods and has 1: no Ready, schedulable node can take another/);

      // The test's own lab was never touched.
      expect(await testHostname()).toBe(`${testHost.hostname}\n`);
    } finally {
      const exited = new Promise((done) => (demo.exitCode !== null ? done(null) : demo.once('exit', done)));
      process.kill(-(demo.pid ?? 0), 'SIGINT');
      const stopped = await Promise.race([exited.then(() => true), new Promise((wake) => setTimeout(() => wake(false), 30_000))]);
      if (!stopped) {
        process.kill(-(demo.pid ?? 0), 'SIGKILL');
      }
      expect(stopped, `the demo did not stop on SIGINT:\n${output}`).toBe(true);
      const stopTime = /demo: stopped ([\d.]+) s after the signal/.exec(output);
      expect(stopTime, output.slice(-2000)).not.toBeNull();
      console.log(`demo: stopped ${stopTime?.[1]} s after Ctrl+C`);
      await rm(dataDir, { recursive: true, force: true });
    }
    expect(output).toContain(`demo: removing lab ${demoLab?.id ?? ''} (its own hosts, bridge and folder only)`);
    expect(labTraces(demoLab as LabDescription, demoInodes)).toEqual([]);
    expect(await testHostname()).toBe(`${testHost.hostname}\n`);
  }, LAB_LOCK_TIMEOUT_MS + 600_000);
});

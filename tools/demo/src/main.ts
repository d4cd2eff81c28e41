import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parse } from 'yaml';
import { type KubeSim, startKubeSim } from '@ccos/tools/kube-sim';
import { requireRoot, startLab } from '@ccos/tools/lab';
import { DEMO_WORKLOADS_SEED, startDemoWorkloads } from './demo-workloads';

/**
 * `npm run demo`: the whole product on one machine, to click through by hand.
 * kube-sim plays the cluster (with sample workloads that show up on the nodes you
 * install), a lab of its own (real sshd in network namespaces, next to any other labs
 * on the machine) plays freshly installed servers, and the installer service runs with
 * its embedded database and the cluster already registered. Needs root (for the lab).
 * Ctrl+C tears down what this demo started, and nothing else.
 */
const PORT = Number(process.env['PORT'] ?? 4000);
const HOSTS = Number(process.env['DEMO_HOSTS'] ?? 3);
const DATA_DIR = resolve(process.env['DEMO_DATA_DIR'] ?? '.data-demo');
const ADMIN_PASSWORD = process.env['ADMIN_PASSWORD'] ?? 'demo-admin-password';
const POD_READY_SECONDS = Number(process.env['DEMO_POD_READY_SECONDS'] ?? 10);

const say = (message: string) => console.log(message);

/**
 * What to undo on the way out. The clients of the hosts and the cluster (the installer service, the
 * workloads' controllers) stop first, at once; then the infrastructure (the lab, kube-sim), at once:
 * no process of this demo talks to a lab host after the lab is gone.
 */
const cleanups: Array<{ what: string; undo: () => Promise<unknown>; stage: 'clients' | 'infrastructure' }> = [];
/** The start-up step under way: a stop waits for it, so what it makes is undone too. */
let starting: Promise<unknown> = Promise.resolve();
let stopping: Promise<void> | null = null;
let stopAsked = 0;

function step<T>(work: Promise<T>): Promise<T> {
  starting = work.catch(() => undefined);
  return work;
}

function stop(code: number): Promise<void> {
  stopping ??= (async () => {
    const asked = Date.now();
    const seconds = () => ((Date.now() - asked) / 1000).toFixed(1);
    await starting;
    // One after the other these took 35–48 s of a Ctrl+C.
    for (const stage of ['clients', 'infrastructure'] as const) {
      await Promise.all(
        cleanups
          .filter((cleanup) => cleanup.stage === stage)
          .map(async ({ what, undo }) => {
            say(`demo: ${what}`);
            await undo().then(
              () => say(`demo: ${what}: done after ${seconds()} s`),
              (error: unknown) => say(`demo: ${what} failed: ${error instanceof Error ? error.message : String(error)}`),
            );
          }),
      );
    }
    say(`demo: stopped ${seconds()} s after the signal`);
    process.exit(code);
  })();
  return stopping;
}

/**
 * A terminal's Ctrl+C reaches this process twice (tsx passes it on as well), so a
 * second signal counts only a while after the first.
 */
function onSignal(signal: string): void {
  if (stopping === null) {
    stopAsked = Date.now();
    say(`demo: ${signal}: stopping (Ctrl+C again in a few seconds leaves at once)`);
    void stop(0);
  } else if (Date.now() - stopAsked > 2000) {
    say(`demo: ${signal} again: leaving at once; the next lab start removes what this lab leaves`);
    process.exit(130);
  }
}
/**
 * What the deployment ships for every managed cluster (deploy/base/rbac: the service's account,
 * its least-privilege roles and bindings, the bootstrap identities' namespace), in the order of its
 * kustomization, which has no transformers.
 */
const SHIPPED_RBAC_SEED = (parse(readFileSync(resolve('deploy/base/rbac/kustomization.yaml'), 'utf8')) as { resources: string[] }).resources
  .map((file) => readFileSync(resolve('deploy/base/rbac', file), 'utf8'))
  .join('\n---\n');

async function main(): Promise<void> {
  requireRoot();
  for (const built of ['dist/apps/api/main.js', 'dist/apps/boot-worker/boot-worker', 'dist/apps/console/browser/index.html']) {
    if (!existsSync(built)) {
      throw new Error(`${built} is missing: run \`npm run build\` first`);
    }
  }
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));

  say(`demo: starting from scratch in ${DATA_DIR}`);
  await rm(DATA_DIR, { recursive: true, force: true });
  await mkdir(DATA_DIR, { recursive: true });
  say('demo: starting kube-sim (the cluster) with the sample workloads of tools/demo/src/demo-workloads.yaml');
  // The service's account and RBAC come with the deployment on a real cluster; the service talks to
  // the cluster as that account (registerCluster below), the demo's own players as the admin.
  // The lab's VIP is not known before the lab starts; the lab gives its kubelets tls-server-name.
  const sim = await step(startKubeSim({ kubeconfigOut: resolve(DATA_DIR, 'kubeconfig'), seed: `${SHIPPED_RBAC_SEED}\n---\n${DEMO_WORKLOADS_SEED}` }));
  cleanups.push({ what: 'stopping kube-sim', undo: () => sim.stop(), stage: 'infrastructure' });
  say(`demo: starting a lab of ${HOSTS} hosts of its own (labs of others on this machine are left alone)`);
  const lab = await step(startLab({ hosts: HOSTS, kubeconfig: sim.kubeconfig, name: `demo :${PORT}`, log: (message) => say(`lab: ${message}`) }));
  cleanups.push({ what: `removing lab ${lab.id} (its own hosts, bridge and folder only)`, undo: () => lab.stop(), stage: 'infrastructure' });
  await writeFile(resolve(DATA_DIR, 'lab.json'), `${JSON.stringify(lab.description, null, 2)}\n`, { mode: 0o600 });
  const workloads = startDemoWorkloads({ kubeconfig: sim.kubeconfig, podReadySeconds: POD_READY_SECONDS, log: (message) => say(`workloads: ${message}`) });
  cleanups.push({ what: 'stopping the sample workloads\' controllers', undo: () => workloads.stop(), stage: 'clients' });

  say(`demo: starting the installer service on port ${PORT}`);
  const api = spawn(process.execPath, ['--enable-source-maps', 'dist/apps/api/main.js'], {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: {
      ...process.env,
      PORT: String(PORT),
      HOST: '0.0.0.0',
      DATA_DIR,
      ADMIN_PASSWORD,
      AGENT_API_URL: `https://${lab.gateway}:${PORT}`,
      ARTIFACTS_DIR: lab.artifactsDir,
      MIN_MEMORY_MB: '256',
      MIN_CPUS: '1',
      LOG_LEVEL: process.env['LOG_LEVEL'] ?? 'warn',
      // The demo's kube-sim listens on 127.0.0.1, an address the service refuses by default.
      ALLOW_CLUSTER_ADDRESSES: 'loopback',
    },
  });
  cleanups.push({ what: 'stopping the installer service', undo: () => stopProcess(api), stage: 'clients' });
  api.once('exit', (code, signal) => {
    if (stopping === null) {
      say(`demo: the installer service exited (${signal ?? `code ${code ?? '?'}`}); stopping the rest`);
      void stop(1);
    }
  });

  const url = `http://localhost:${PORT}`;
  await step(waitForReady(url));
  const token = await step(login(url));
  await step(registerCluster(url, token, { sim, lab }));
  const hostsFile = resolve(DATA_DIR, 'demo-hosts.json');
  await writeFile(hostsFile, JSON.stringify(lab.hosts.map(({ hostname, ip, port, user, password }) => ({ hostname, ip, port, user, password })), null, 2));
  say(
    [
      '',
      `  ccos-scaler demo is up: ${url}  (user admin, password ${ADMIN_PASSWORD})`,
      `  cluster "demo" (kube-sim at ${sim.url}, VIP ${lab.vip}) is registered.`,
      `  lab ${lab.id} on ${lab.subnet} (gateway ${lab.gateway}); its description is in ${resolve(DATA_DIR, 'lab.json')}.`,
      '  Hosts to add (录入节点) — hostname, IP, SSH user and password:',
      ...lab.hosts.map((host) => `    ${host.hostname.padEnd(6)} ${host.ip.padEnd(14)} ${host.user} / ${host.password}`),
      `  (also in ${hostsFile}). kubectl: KUBECONFIG=${sim.kubeconfigPath ?? '(in memory)'} kubectl get pods -A -o wide`,
      '  Sample workloads (shop/web with a PodDisruptionBudget, shop/cache with an emptyDir, shop/debug-shell',
      '  without a controller, the DaemonSet monitoring/node-exporter) land on the first nodes you install:',
      '  remove one of those to see the removal preview, the drain and the budget at work.',
      '  Ctrl+C stops everything this demo started.',
      '',
    ].join('\n'),
  );
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return;
  }
  const exited = new Promise((done) => child.once('exit', done));
  child.kill('SIGTERM');
  await exited;
}

async function waitForReady(url: string): Promise<void> {
  for (let attempt = 0; attempt < 600; attempt += 1) {
    if (await fetch(`${url}/readyz`).then((response) => response.ok, () => false)) {
      return;
    }
    await new Promise((wake) => setTimeout(wake, 100));
  }
  throw new Error('the installer service did not start within 60 s');
}

async function gql<T>(url: string, query: string, variables: Record<string, unknown>, token?: string): Promise<T> {
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { data?: T; errors?: Array<{ message: string }> };
  if (!body.data) {
    throw new Error(body.errors?.map((error) => error.message).join('; ') ?? `HTTP ${response.status}`);
  }
  return body.data;
}

async function login(url: string): Promise<string> {
  const data = await gql<{ login: { token: string } }>(url, 'mutation($u: String!, $p: String!) { login(username: $u, password: $p) { token } }', {
    u: 'admin',
    p: ADMIN_PASSWORD,
  });
  return data.login.token;
}

async function registerCluster(url: string, token: string, { sim, lab }: { sim: KubeSim; lab: { vip: string; machineConfigCaCert: string } }): Promise<void> {
  // What an operator does: a token of the service's account (kubectl create token), not the admin's.
  const kubeconfig = sim.kubeconfigFor({ token: sim.requestServiceAccountToken('ccos-scaler', 'ccos-scaler', { expirationSeconds: 365 * 86_400 }) }, 'ccos-scaler');
  await gql(url, 'mutation($input: RegisterClusterInput!) { registerCluster(input: $input) { id } }', {
    input: { name: 'demo', apiServerUrl: sim.url, vip: lab.vip, kubeconfig, bootstrapStyle: 'KUBEADM', machineConfigCaCert: lab.machineConfigCaCert },
  }, token);
}

main().catch(async (error: unknown) => {
  say(`demo: failed: ${error instanceof Error ? error.message : String(error)}`);
  await stop(1);
});

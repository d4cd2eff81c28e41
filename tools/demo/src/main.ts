import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { startKubeSim } from '@ccos/tools/kube-sim';
import { GATEWAY_IP, VIP, requireRoot, startLab } from '@ccos/tools/lab';

/**
 * `npm run demo`: the whole product on one machine, to click through by hand.
 * kube-sim plays the cluster, lab hosts (real sshd in network namespaces) play freshly
 * installed servers, and the installer service runs with its embedded database and
 * the cluster already registered. Needs root (for the lab). Ctrl+C tears it all down.
 */
const PORT = Number(process.env['PORT'] ?? 4000);
const HOSTS = Number(process.env['DEMO_HOSTS'] ?? 3);
const DATA_DIR = resolve(process.env['DEMO_DATA_DIR'] ?? '.data-demo');
const ADMIN_PASSWORD = process.env['ADMIN_PASSWORD'] ?? 'demo-admin-password';
const BOOTSTRAP_NAMESPACE_SEED = 'apiVersion: v1\nkind: Namespace\nmetadata: {name: ccos-scaler-bootstrap}\n';

async function main(): Promise<void> {
  requireRoot();
  for (const built of ['dist/apps/api/main.js', 'dist/apps/boot-worker/boot-worker', 'dist/apps/console/browser/index.html']) {
    if (!existsSync(built)) {
      throw new Error(`${built} is missing: run \`npm run build\` first`);
    }
  }
  // Every demo starts from scratch: a new simulated cluster, new hosts, an empty inventory.
  await rm(DATA_DIR, { recursive: true, force: true });
  await mkdir(DATA_DIR, { recursive: true });
  // The namespace of the installs' bootstrap identities comes with the deployment on a real cluster.
  const sim = await startKubeSim({ tlsSans: [VIP, GATEWAY_IP], kubeconfigOut: resolve(DATA_DIR, 'kubeconfig'), seed: BOOTSTRAP_NAMESPACE_SEED });
  const lab = await startLab({ hosts: HOSTS, kubeconfig: sim.kubeconfig, log: (message) => console.log(`lab: ${message}`) });
  const api = spawn(process.execPath, ['--enable-source-maps', 'dist/apps/api/main.js'], {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: {
      ...process.env,
      PORT: String(PORT),
      HOST: '0.0.0.0',
      DATA_DIR,
      ADMIN_PASSWORD,
      AGENT_API_URL: `http://${lab.gateway}:${PORT}`,
      ARTIFACTS_DIR: lab.artifactsDir,
      MIN_MEMORY_MB: '256',
      MIN_CPUS: '1',
      LOG_LEVEL: process.env['LOG_LEVEL'] ?? 'warn',
      // The demo's kube-sim listens on 127.0.0.1, an address the service refuses by default.
      ALLOW_CLUSTER_ADDRESSES: 'loopback',
    },
  });
  const stop = async () => {
    api.kill('SIGTERM');
    await new Promise((done) => api.once('exit', done));
    await lab.stop();
    await sim.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());

  const url = `http://localhost:${PORT}`;
  await waitForReady(url);
  const token = await login(url);
  await registerCluster(url, token, { sim, lab });
  const hostsFile = resolve(DATA_DIR, 'demo-hosts.json');
  await writeFile(hostsFile, JSON.stringify(lab.hosts.map(({ hostname, ip, port, user, password }) => ({ hostname, ip, port, user, password })), null, 2));
  console.log(
    [
      '',
      `  ccos-scaler demo is up: ${url}  (user admin, password ${ADMIN_PASSWORD})`,
      `  cluster "demo" (kube-sim at ${sim.url}, VIP ${lab.vip}) is registered.`,
      '  Hosts to add (录入节点) — hostname, IP, SSH user and password:',
      ...lab.hosts.map((host) => `    ${host.hostname.padEnd(6)} ${host.ip.padEnd(14)} ${host.user} / ${host.password}`),
      `  (also in ${hostsFile}). kubectl: KUBECONFIG=${sim.kubeconfigPath ?? '(in memory)'} kubectl get nodes`,
      '  Ctrl+C stops everything.',
      '',
    ].join('\n'),
  );
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

async function registerCluster(url: string, token: string, { sim, lab }: { sim: { url: string; kubeconfig: string }; lab: { vip: string; machineConfigCaCert: string } }): Promise<void> {
  await gql(url, 'mutation($input: RegisterClusterInput!) { registerCluster(input: $input) { id } }', {
    input: { name: 'demo', apiServerUrl: sim.url, vip: lab.vip, kubeconfig: sim.kubeconfig, bootstrapStyle: 'KUBEADM', machineConfigCaCert: lab.machineConfigCaCert },
  }, token);
}

main().catch(async (error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});


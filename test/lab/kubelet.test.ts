import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '@ccos/shared/util-timing/testing';
import { startKubeSim, type KubeSim } from '@ccos/tools/kube-sim';
import { startLab, type IgnitionConfig, type Lab, type LabHost } from '@ccos/tools/lab';
import { applyIgnition, fetchWorkerConfig } from './ignition-apply';
import { connectSsh, type SshSession } from './ssh-session';

/**
 * The stand-in kubelet joins kube-sim as a kubelet does: started with
 * `systemctl` on a lab host after the Ignition files are in place, it asks
 * for a client certificate (approved with the real kubectl), registers its
 * Node, asks for a serving certificate, and keeps the Node Ready.
 */
interface Csr {
  metadata: { name: string };
  spec: { signerName: string; username: string; usages: string[] };
  status?: { conditions?: { type: string }[]; certificate?: string };
}

describe('stand-in kubelet against kube-sim', () => {
  let sim: KubeSim | undefined;
  let lab: Lab | undefined;
  let dir = '';
  let kubeconfigFile = '';
  const sessions: SshSession[] = [];

  const kubectl = (...args: string[]) => new Promise<string>((resolve, reject) => {
    execFile('kubectl', ['--kubeconfig', kubeconfigFile, ...args], { timeout: 20_000 }, (error, stdout, stderr) => {
      if (error) {
        reject(new Error(`kubectl ${args.join(' ')}: ${stderr || error.message}`));
      } else {
        resolve(stdout);
      }
    });
  });
  const csrs = async (): Promise<Csr[]> => (JSON.parse(await kubectl('get', 'csr', '-o', 'json')) as { items: Csr[] }).items;
  const pending = (csr: Csr) => (csr.status?.conditions ?? []).length === 0;
  function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
    return eventually(probe, { what, timeoutMs, intervalMs: 250, tolerate: () => true });
  }

  async function prepareHost(host: LabHost, extraUnitEnvironment?: string): Promise<SshSession> {
    const { privateKeyPath, artifactsDir, machineConfigServer, machineConfigCaCert } = lab as Lab;
    const session = await connectSsh(host, { privateKey: await readFile(privateKeyPath) });
    sessions.push(session);
    const kubelet = await readFile(join(artifactsDir, 'binary/kubelet'));
    expect((await session.exec('mkdir -p /usr/local/bin && cat > /usr/local/bin/kubelet && chmod 755 /usr/local/bin/kubelet', kubelet)).code).toBe(0);
    const response = await fetchWorkerConfig(machineConfigServer, machineConfigCaCert);
    expect(response.status).toBe(200);
    await applyIgnition(session, JSON.parse(response.body) as IgnitionConfig);
    if (extraUnitEnvironment !== undefined) {
      await session.exec("mkdir -p /etc/systemd/system/kubelet.service.d && cat > /etc/systemd/system/kubelet.service.d/99-test.conf", `[Service]\nEnvironment=${extraUnitEnvironment}\n`);
    }
    const started = await session.exec('systemctl daemon-reload && systemctl enable --now kubelet && systemctl is-active kubelet');
    expect(started, started.stderr).toMatchObject({ code: 0, stdout: 'active\n' });
    return session;
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ccos-lab-kubelet-'));
    // Its certificate does not name the lab's VIP (not known yet): the lab gives the kubelets tls-server-name.
    sim = await startKubeSim();
    kubeconfigFile = join(dir, 'admin.kubeconfig');
    await writeFile(kubeconfigFile, sim.kubeconfig, { mode: 0o600 });
    lab = await startLab({
      hosts: 2,
      kubeconfig: sim.kubeconfig,
      kubelet: { csrTimeoutSeconds: 120, heartbeatSeconds: 2, readyDelaySeconds: 1 },
    });
  });

  afterAll(async () => {
    sessions.forEach((session) => session.close());
    await lab?.stop();
    await sim?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('bootstraps, registers and keeps its Node Ready once kubectl approves its CSRs', async () => {
    const host = (lab as Lab).hosts[0] as LabHost;
    const session = await prepareHost(host);

    const client = await waitFor('the client CSR', async () =>
      (await csrs()).find((csr) => csr.spec.signerName === 'kubernetes.io/kube-apiserver-client-kubelet' && pending(csr)));
    expect(client.metadata.name).toMatch(/^csr-/);
    expect(client.spec.username).toMatch(/^system:bootstrap:[a-z0-9]{6}$/);
    expect(client.spec.usages.sort()).toEqual(['client auth', 'digital signature']);
    const journal = await session.exec('journalctl -u kubelet --no-pager');
    expect(journal.stdout).toContain(`waiting for certificate approval of ${client.metadata.name}`);

    await kubectl('certificate', 'approve', client.metadata.name);
    const serving = await waitFor('the serving CSR', async () =>
      (await csrs()).find((csr) => csr.spec.signerName === 'kubernetes.io/kubelet-serving' && pending(csr)));
    expect(serving.spec.username).toBe(`system:node:${host.hostname}`);
    await kubectl('certificate', 'approve', serving.metadata.name);

    const ready = await waitFor('the Node to be Ready', async () => {
      const status = await kubectl('get', 'node', host.hostname, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}');
      return status === 'True' ? status : undefined;
    });
    expect(ready).toBe('True');
    const node = JSON.parse(await kubectl('get', 'node', host.hostname, '-o', 'json')) as {
      metadata: { labels: Record<string, string> };
      status: { addresses: { type: string; address: string }[] };
    };
    expect(node.metadata.labels).toMatchObject({ 'node-role.kubernetes.io/worker': '', 'kubernetes.io/hostname': host.hostname });
    expect(node.status.addresses).toEqual([{ type: 'InternalIP', address: host.ip }, { type: 'Hostname', address: host.hostname }]);
    await waitFor('the Lease', async () => (await kubectl('get', 'lease', '-n', 'kube-node-lease', host.hostname, '-o', 'name')).trim() || undefined);
    await waitFor('the serving certificate', async () =>
      (await session.exec('test -s /var/lib/kubelet/pki/kubelet-server-current.pem')).code === 0 ? true : undefined);
    expect((await session.exec('test -s /var/lib/kubelet/pki/kubelet-client-current.pem && test -s /var/lib/kubelet/kubeconfig')).code).toBe(0);

    // A restart reuses the client certificate: no new client CSR.
    const clientCsrs = (await csrs()).filter((csr) => csr.spec.signerName === 'kubernetes.io/kube-apiserver-client-kubelet').length;
    expect((await session.exec('systemctl restart kubelet')).code).toBe(0);
    const restartedAt = Date.now();
    await waitFor('the restarted kubelet to load its certificate', async () =>
      (await session.exec('journalctl -u kubelet --no-pager')).stdout.includes('Loading cert/key pair') ? true : undefined);
    // Renewing its Lease after the restart, it talks to the API server with the certificate it loaded.
    await waitFor('the restarted kubelet to renew its Lease', async () =>
      Date.parse(await kubectl('get', 'lease', '-n', 'kube-node-lease', host.hostname, '-o', 'jsonpath={.spec.renewTime}')) >= restartedAt ? true : undefined);
    expect((await csrs()).filter((csr) => csr.spec.signerName === 'kubernetes.io/kube-apiserver-client-kubelet')).toHaveLength(clientCsrs);
    expect((await session.exec('systemctl stop kubelet && systemctl is-active kubelet')).stdout).toBe('inactive\n');
  });

  it('makes a new client CSR when one stays pending past its timeout', async () => {
    const host = (lab as Lab).hosts[1] as LabHost;
    await prepareHost(host, 'KUBELET_CSR_TIMEOUT=2s');
    // The first host's client CSR was approved, so every pending client CSR is this host's.
    const mine = (csr: Csr) => csr.spec.signerName === 'kubernetes.io/kube-apiserver-client-kubelet' && pending(csr);
    const before = (await csrs()).filter(mine).length;
    const two = await waitFor('a second pending client CSR', async () => {
      const count = (await csrs()).filter(mine).length;
      return count >= before + 2 ? count : undefined;
    }, 20_000);
    expect(two).toBeGreaterThanOrEqual(before + 2);
  });
});

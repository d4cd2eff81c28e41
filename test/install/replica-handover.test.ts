import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TcpForwarder, startTcpForwarder } from '@ccos/tools/lab';
import { type ApiProcess, freePort } from '../support/api-process';
import { type ScaleOutWorld, startScaleOutWorld } from '../support/scale-out-world';

const CLI = resolve('dist/apps/cli/ccos-scaler.mjs');

interface ProgressLine {
  run: { id: string; status: string };
  events: Array<{ seq: number; step: string; status: string }>;
}

/**
 * A replica stopped with SIGTERM (a rolling update, a drained Kubernetes node) closes its
 * WebSockets, so a client following an install reconnects through the Service to another
 * replica and goes on; the agent does the same for its reports.
 */
describe('replica handover: SIGTERM moves a CLI subscription and an agent to another replica', () => {
  let world: ScaleOutWorld;
  let b: ApiProcess;
  let service: TcpForwarder;
  let servicePort: number;
  let cli: ChildProcess | null = null;
  let nodeId = '';

  beforeAll(async () => {
    servicePort = await freePort('0.0.0.0');
    // Joins wait for an operator at START_KUBELET: the install is still running when A stops.
    world = await startScaleOutWorld({ hosts: 1, name: 'replica-handover', csrAutoApprove: false, apiEnv: (lab) => ({ AGENT_API_URL: `https://${lab.gateway}:${servicePort}` }) });
    b = await world.startReplica();
    // The Service knows only A at first, so everything the CLI and the agent open lands on A.
    service = await startTcpForwarder({ host: '0.0.0.0', port: servicePort }, [{ host: '127.0.0.1', port: world.api.port }]);
    nodeId = await world.addHost(0);
    await world.waitForStatus(nodeId, ['READY_TO_INSTALL'], 120_000);
  }, 300_000);
  afterAll(async () => {
    cli?.kill('SIGKILL');
    await service?.close();
    await world?.stop();
  });

  it('the CLI\'s `nodes watch` reconnects to B after A\'s SIGTERM and follows the install to JOINED', async () => {
    const started = await world.gql<{ installNode: { id: string } }>('mutation($id: ID!) { installNode(nodeId: $id) { id } }', { id: nodeId });
    expect(started.errors).toBeUndefined();
    const runId = started.data?.installNode.id ?? '';

    let stdout = '';
    let stderr = '';
    const child = spawn(process.execPath, [CLI, 'nodes', 'watch', nodeId, '--output', 'json'], {
      env: { PATH: process.env['PATH'] ?? '', HOME: '/nonexistent', LANG: 'en_US.UTF-8', CCOS_SERVER: `http://127.0.0.1:${servicePort}`, CCOS_TOKEN: world.token },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    cli = child;
    const exited = new Promise<number | null>((done) => child.on('close', done));
    const lines = () => stdout.split('\n').filter((line) => line.trim()).map((line) => JSON.parse(line) as ProgressLine);
    const waiting = new Promise<void>((ready, fail) => {
      child.stdout?.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        if (lines().some((line) => line.events.some((event) => event.step === 'START_KUBELET' && event.status === 'STARTED'))) {
          ready();
        }
      });
      child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      void exited.then((code) => fail(new Error(`the CLI exited with ${code} before START_KUBELET: ${stderr}\n${stdout}`)));
    });
    await waiting;
    const beforeStop = lines().length;
    expect(service.connections.get(b.port) ?? 0).toBe(0);

    // A rolling update: B joins the Service, A is told to stop.
    service.addTarget({ host: '127.0.0.1', port: b.port });
    await world.api.kill();
    expect(world.api.output()).toContain('shutting down');

    // The kubelet's CSRs are approved through B, by B's auto-approver.
    const on = await b.gql('mutation($c: ID!) { setCsrAutoApprove(clusterId: $c, enabled: true) { id } }', { c: world.clusterId }, world.token);
    expect(on.errors).toBeUndefined();

    expect(await exited).toBe(0);
    const all = lines();
    expect(all.length).toBeGreaterThan(beforeStop);
    expect(all.at(-1)?.run).toMatchObject({ id: runId, status: 'SUCCEEDED' });
    const after = all.slice(beforeStop).flatMap((line) => line.events.map((event) => `${event.step}:${event.status}`));
    expect(after).toContain('START_KUBELET:SUCCEEDED');
    // Everything after the stop went through B: the CLI's new socket and the agent's reports.
    expect(service.connections.get(b.port) ?? 0).toBeGreaterThan(0);
    const node = await b.gql<{ node: { status: string } }>('query($id: ID!) { node(id: $id) { status } }', { id: nodeId }, world.token);
    expect(node.data?.node.status).toBe('JOINED');
  }, 300_000);
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/api-process';
import { type ScaleOutWorld, startScaleOutWorld } from '../support/scale-out-world';

const RUNS = `query($id: ID!) { node(id: $id) { installRuns { id status failedStep diagnostics { size } steps { step status } } } }`;

interface RunView {
  id: string;
  status: string;
  failedStep: string | null;
  diagnostics: { size: number } | null;
  steps: Array<{ step: string; status: string }>;
}

/**
 * Real agents on lab hosts against a service started as the deployment starts it: AGENT_PORT
 * set and AGENT_API_URL left to its default. The agents are given a URL on the agents' listener
 * and do everything there — health, run state, every step's events, the downloads, a failed
 * run's diagnostics — through the listener that answers nothing else.
 */
describe('installs through the agents\' listener (AGENT_PORT), its URL derived', () => {
  let world: ScaleOutWorld;
  let agentPort: number;
  const nodeIds: string[] = [];

  beforeAll(async () => {
    agentPort = await freePort('0.0.0.0');
    world = await startScaleOutWorld({ hosts: 2, name: 'agents-listener', csrAutoApprove: true, apiEnv: { AGENT_PORT: String(agentPort), AGENT_API_URL: '' } });
    for (const index of [0, 1]) {
      nodeIds.push(await world.addHost(index));
    }
    await Promise.all(nodeIds.map((id) => world.waitForStatus(id, ['READY_TO_INSTALL'], 120_000)));
  }, 300_000);
  afterAll(async () => {
    await world?.stop();
  });

  const lastRun = async (nodeId: string): Promise<RunView | undefined> => (await world.gql<{ node: { installRuns: RunView[] } }>(RUNS, { id: nodeId })).data?.node.installRuns.at(-1);

  it('a host joins, and a failed one\'s diagnostics arrive, with the agents given https://<gateway>:AGENT_PORT', async () => {
    const [failing, joining] = nodeIds;
    await world.lab.faults.setSwap('h1', true);
    for (const id of nodeIds) {
      expect((await world.gql('mutation($id: ID!) { installNode(nodeId: $id) { id } }', { id })).errors).toBeUndefined();
    }
    const [failed, joined] = await Promise.all([world.waitForStatus(failing, ['INSTALL_FAILED', 'JOINED'], 120_000), world.waitForStatus(joining, ['JOINED', 'INSTALL_FAILED'], 240_000)]);
    expect([failed.status, joined.status]).toEqual(['INSTALL_FAILED', 'JOINED']);

    for (const [index, id] of nodeIds.entries()) {
      const run = await lastRun(id);
      const config = JSON.parse((await world.lab.exec(`h${index + 1}`, ['cat', `/opt/ccos-scaler/runs/${run?.id}/config.json`])).stdout) as { apiUrl: string };
      expect(config.apiUrl).toBe(`https://${world.lab.gateway}:${agentPort}`);
    }
    const succeeded = await lastRun(joining);
    expect(succeeded?.status).toBe('SUCCEEDED');
    expect(succeeded?.steps.map((step) => step.status)).toEqual(Array(6).fill('SUCCEEDED'));

    // The failed run's agent uploads its bundle (POST /agent/diagnostics) after reporting the failure.
    let withDiagnostics = await lastRun(failing);
    for (let attempt = 0; attempt < 50 && !withDiagnostics?.diagnostics; attempt += 1) {
      await new Promise((wake) => setTimeout(wake, 200));
      withDiagnostics = await lastRun(failing);
    }
    expect(withDiagnostics).toMatchObject({ status: 'FAILED', failedStep: 'PREFLIGHT' });
    expect(withDiagnostics?.diagnostics?.size).toBeGreaterThan(100);
  }, 400_000);
});

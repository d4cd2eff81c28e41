import type { AgentChannel, InstallRunEntity, NodeEntity } from '@ccos/api/data-access-db';
import type { AgentControl } from './install.service';
import { type AgentLaunchSettings, agentChannelOf, agentRunConfig, launchFailure } from './ssh-agent-control';

/** How long the launcher may take to accept a launch or a stop. */
const LAUNCHER_TIMEOUT_MS = 30_000;

/**
 * Hands each run's agent config to an agent launcher on this machine (`AGENT_LAUNCHER_URL`,
 * loopback only) instead of copying and starting the agent over SSH. The launcher is a simulated
 * fleet (bench/support/simulated-agents): it starts, for each run, an agent that speaks the real
 * agent protocol with the config, token and TLS pin the SSH launch would have written. Everything
 * after the launch (tokens, events, artifacts, bootstrap identities, CSRs) is the service's real path.
 */
export class LauncherAgentControl implements AgentControl {
  constructor(
    private readonly launcherUrl: string,
    private readonly settings: AgentLaunchSettings,
  ) {}

  get channel(): AgentChannel {
    return agentChannelOf(this.settings);
  }

  async launch(node: NodeEntity, run: InstallRunEntity, token: string, kubeletBootstrapToken: string | null): Promise<void> {
    const apiUrl = this.settings.agentApiUrl ?? `https://127.0.0.1:${this.settings.servicePort()}`;
    await this.post('launch', await agentRunConfig(this.settings, node, run, { apiUrl, token, kubeletBootstrapToken }));
  }

  async stop(_node: NodeEntity, run: InstallRunEntity): Promise<void> {
    await this.post('stop', { runId: run.id });
  }

  private async post(action: 'launch' | 'stop', body: Record<string, unknown>): Promise<void> {
    const url = `${this.launcherUrl.replace(/\/$/, '')}/${action}`;
    let response: Response;
    try {
      response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(LAUNCHER_TIMEOUT_MS) });
    } catch (error) {
      throw launchFailure(`the agent launcher at ${this.launcherUrl} did not answer: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (!response.ok) {
      throw launchFailure(`the agent launcher at ${this.launcherUrl} refused the ${action} (HTTP ${response.status}): ${(await response.text()).slice(0, 500)}`);
    }
  }
}

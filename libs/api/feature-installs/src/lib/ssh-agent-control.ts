import type { AgentChannel, InstallRunEntity, NodeEntity } from '@ccos/api/data-access-db';
import { AGENT_DIR, AGENT_REMOTE_PATH, type AgentBinary, ensureAgent, sshFailureOutcome, sshTargetOf } from '@ccos/api/data-access-hosts';
import { type SshPool, type SshSession, defineScript, uploadFile } from '@ccos/api/data-access-ssh';
import type { SecretBox } from '@ccos/api/util-secrets';
import type { AgentControl, LaunchFailure } from './install.service';

/**
 * `serviceTls` of the agent's config: how the agent recognises the service (its
 * `TlsPin`; the agent checks every field, see libs/agent/util-host tls-pin.ts).
 */
export interface AgentServiceTls {
  /** PEM CA certificates the chain must end at; they replace the system CAs. */
  readonly caCertificates?: string;
  /** Also check that the certificate names the apiUrl's host. */
  readonly verifyHostname?: boolean;
  /** base64 sha256 of the leaf's SubjectPublicKeyInfo, any of. */
  readonly publicKeySha256?: readonly string[];
}

export interface AgentLaunchSettings {
  /** The service as hosts reach it; null = https:// at the address the host sees our SSH connection come from. */
  readonly agentApiUrl: string | null;
  /** What the agent of a run reaching the service at this https URL must pin. */
  readonly serviceTls: (apiUrl: string) => AgentServiceTls;
  /** sha256 (hex) of the manifest's bytes of the cluster's artifact set, as the service serves them now. */
  readonly artifactManifestSha256: (clusterId: string) => Promise<string>;
  /** The port the service listens on, for the derived URL. */
  readonly servicePort: () => number;
  readonly machineConfigCaCert: (clusterId: string) => Promise<string | null>;
  readonly vip: (clusterId: string) => Promise<string>;
  readonly requirements: { readonly minKernel: string; readonly minMemoryBytes: number; readonly minCpus: number; readonly maxClockSkewSeconds: number };
  readonly nodeReadyTimeoutSeconds: number;
  /** Where on the host the agent writes its CPU profiles (boot-worker's BOOT_WORKER_CPU_PROFILE); null: not profiled. */
  readonly cpuProfileDir?: string | null;
}

/** How agents started now reach the service: plain HTTP only when the operator gave an http:// AGENT_API_URL. */
export function agentChannelOf(settings: AgentLaunchSettings): AgentChannel {
  return settings.agentApiUrl?.startsWith('http:') ? 'PLAIN_HTTP' : 'HTTPS';
}

/** What a run's agent is told: the config file `boot-worker` reads (apps/boot-worker load-config.ts). */
export async function agentRunConfig(
  settings: AgentLaunchSettings,
  node: NodeEntity,
  run: InstallRunEntity,
  agent: { readonly apiUrl: string; readonly token: string; readonly kubeletBootstrapToken: string | null },
): Promise<Record<string, unknown>> {
  return {
    apiUrl: agent.apiUrl,
    serviceTls: agent.apiUrl.startsWith('https:') ? settings.serviceTls(agent.apiUrl) : null,
    artifactManifestSha256: await settings.artifactManifestSha256(node.clusterId),
    runId: run.id,
    token: agent.token,
    nodeName: node.hostname,
    nodeIp: node.ip,
    vip: await settings.vip(node.clusterId),
    labels: node.labels,
    taints: node.taints,
    providerId: node.providerId,
    startStep: run.startStep,
    machineConfigCaCert: await settings.machineConfigCaCert(node.clusterId),
    stateDir: runFolder(run.id),
    requirements: settings.requirements,
    timeouts: { nodeReadySeconds: settings.nodeReadyTimeoutSeconds },
    kubeletBootstrapToken: agent.kubeletBootstrapToken,
    purpose: run.purpose,
    steps: run.steps,
  };
}

/** `$SSH_CONNECTION` is "client-ip client-port server-ip server-port": the client is us, as the host sees us. */
const SSH_CLIENT_ADDRESS = defineScript('ssh-client-address', 'set -- $SSH_CONNECTION; printf %s "$1"');

export function runFolder(runId: string): string {
  return `${AGENT_DIR}/runs/${runId}`;
}

/**
 * Starts and stops boot-worker over SSH. The run's parameters, its agent token and the
 * kubelet's bootstrap token included, go in a 0600 config file written over SFTP (the session
 * is authenticated by the pinned host key), never on a command line; `boot-worker start`
 * detaches, so losing the SSH session does not stop the agent.
 *
 * That session is authenticated (the host key is pinned), which makes it the one place
 * to hand the agent what it must trust on the network it cannot trust: the service's
 * TLS pin and the sha256 of the artifact manifest. With both, every byte the agent runs
 * is checked against something that never crossed the network unauthenticated.
 */
export class SshAgentControl implements AgentControl {
  constructor(
    private readonly pool: SshPool,
    private readonly secrets: SecretBox,
    private readonly agent: () => AgentBinary | null,
    private readonly settings: AgentLaunchSettings,
  ) {}

  /** Plain HTTP only when the operator gave an http:// AGENT_API_URL (which needs AGENT_PLAIN_HTTP=allow). */
  get channel(): AgentChannel {
    return agentChannelOf(this.settings);
  }

  async launch(node: NodeEntity, run: InstallRunEntity, token: string, kubeletBootstrapToken: string | null): Promise<void> {
    const agent = this.agent();
    if (!agent) {
      throw launchFailure('the installer service has no agent executable (AGENT_BINARY)');
    }
    await this.withSession(node, async (session) => {
      await ensureAgent(session, agent);
      const configPath = `${runFolder(run.id)}/config.json`;
      const apiUrl = this.settings.agentApiUrl ?? (await this.derivedApiUrl(session));
      const config = await agentRunConfig(this.settings, node, run, { apiUrl, token, kubeletBootstrapToken });
      await uploadFile(session, { source: Buffer.from(JSON.stringify(config, null, 2)), remotePath: configPath, mode: 0o600 });
      const profiled = this.settings.cpuProfileDir ? ['env', `BOOT_WORKER_CPU_PROFILE=${this.settings.cpuProfileDir}`] : [];
      const started = await session.exec([...profiled, AGENT_REMOTE_PATH, 'start', '--config', configPath], { timeoutMs: 60_000 });
      if (started.exitCode !== 0) {
        throw launchFailure(`boot-worker start exited with ${String(started.exitCode)}: ${(started.stderr || started.stdout).trim().slice(-500)}`);
      }
    });
  }

  async stop(node: NodeEntity, run: InstallRunEntity): Promise<void> {
    await this.withSession(node, async (session) => {
      // A short grace: the agent only needs to send its last event; the host's SSH slot is held meanwhile.
      await session.exec([AGENT_REMOTE_PATH, 'stop', '--config', `${runFolder(run.id)}/config.json`, '--grace', '10'], { timeoutMs: 30_000 });
    });
  }

  private async derivedApiUrl(session: SshSession): Promise<string> {
    const result = await session.runScript(SSH_CLIENT_ADDRESS, [], { timeoutMs: 10_000 });
    const address = result.stdout.trim();
    if (result.exitCode !== 0 || !address) {
      throw launchFailure('cannot tell which address the host reaches the service at; set AGENT_API_URL');
    }
    return `https://${address.includes(':') ? `[${address}]` : address}:${this.settings.servicePort()}`;
  }

  private async withSession(node: NodeEntity, work: (session: SshSession) => Promise<void>): Promise<void> {
    try {
      await this.pool.run(sshTargetOf(node, this.secrets), work);
    } catch (error) {
      const outcome = sshFailureOutcome(error);
      if (outcome) {
        const launchFailure: LaunchFailure = {
          message: outcome.reason.message,
          coded: outcome.reason,
          kind: outcome.event === 'SSH_AUTH_FAILED' ? 'AUTH_FAILED' : outcome.event === 'HOST_KEY_MISMATCH' ? 'HOST_KEY_CHANGED' : 'UNREACHABLE',
          offeredFingerprint: outcome.fields.offeredHostKeyFingerprint ?? undefined,
        };
        throw Object.assign(new Error(launchFailure.message), launchFailure);
      }
      throw error;
    }
  }
}

/** A launch failure that is not the host's SSH trouble (kind OTHER). */
export function launchFailure(message: string): Error & LaunchFailure {
  return Object.assign(new Error(message), { kind: 'OTHER' as const });
}

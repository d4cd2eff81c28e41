export { AGENT_DIR, AGENT_REMOTE_PATH, loadAgentBinary, type AgentBinary, type AgentCopyStats, type CompressedAgent, type LoadAgentOptions } from './lib/agent-binary';
export { ensureAgent } from './lib/agent-copy';
export { credentialsFrom, sealCredentials, type SshCredentials } from './lib/node-credentials';
export { sshFailureOutcome, sshTargetOf } from './lib/ssh-access';

import type { NodeEntity } from '@ccos/api/data-access-db';
import { type SshError, type SshTarget, isSshError } from '@ccos/api/data-access-ssh';
import type { SecretBox } from '@ccos/api/util-secrets';
import { type CodedText, message } from '@ccos/shared/messages';
import { openCredentials } from './node-credentials';

/** The SSH target of a node, with its pinned host key (none before the first connection). */
export function sshTargetOf(node: NodeEntity, secrets: SecretBox): SshTarget {
  const credentials = openCredentials(secrets, node);
  if (!credentials || !node.ip || !node.sshUser) {
    throw new Error(`node ${node.hostname} has no SSH access recorded (it was discovered in the cluster, not added here)`);
  }
  return {
    host: node.ip,
    port: node.sshPort,
    username: node.sshUser,
    auth:
      credentials.kind === 'PASSWORD'
        ? { kind: 'password', password: credentials.password }
        : { kind: 'privateKey', privateKey: credentials.privateKey, passphrase: credentials.passphrase ?? undefined },
    hostKey: node.hostKeyFingerprint ? { fingerprint: node.hostKeyFingerprint, algorithm: node.hostKeyAlgorithm ?? undefined } : null,
    sudo: node.sshUser !== 'root',
  };
}

/** The node event and fields an SSH failure leads to, or null when it is not about reaching the host. */
export function sshFailureOutcome(
  error: unknown,
): { event: 'SSH_AUTH_FAILED' | 'SSH_UNREACHABLE' | 'HOST_KEY_MISMATCH'; reason: CodedText; fields: Partial<NodeEntity> } | null {
  if (!isSshError(error)) {
    return null;
  }
  const failure: SshError = error;
  switch (failure.kind) {
    case 'AUTH_FAILED':
      return { event: 'SSH_AUTH_FAILED', reason: failure.coded ?? message('node.sshAuthFailed', { detail: failure.message }), fields: {} };
    case 'HOST_KEY_CHANGED':
      return { event: 'HOST_KEY_MISMATCH', reason: failure.coded ?? message('node.sshHostKeyChanged', { detail: failure.message }), fields: { offeredHostKeyFingerprint: failure.offeredFingerprint ?? null } };
    case 'UNREACHABLE':
    case 'TIMEOUT':
    case 'CONNECTION_LOST':
      return { event: 'SSH_UNREACHABLE', reason: failure.coded ?? message('node.sshUnreachable', { detail: failure.message }), fields: {} };
    default:
      return null;
  }
}

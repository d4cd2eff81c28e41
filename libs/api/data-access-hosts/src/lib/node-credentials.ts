import type { NodeEntity } from '@ccos/api/data-access-db';
import { BadUserInputError } from '@ccos/api/util-graphql';
import type { SecretBox } from '@ccos/api/util-secrets';
import { message } from '@ccos/shared/messages';

/** How the service logs in to a host. Sealed at rest under this purpose; never returned. */
export type SshCredentials =
  | { readonly kind: 'PASSWORD'; readonly password: string }
  | { readonly kind: 'PRIVATE_KEY'; readonly privateKey: string; readonly passphrase: string | null };

export const SSH_CREDENTIALS_PURPOSE = 'node-ssh-credentials';

const PRIVATE_KEY = /^-----BEGIN (?:OPENSSH |RSA |EC |DSA |ENCRYPTED )?PRIVATE KEY-----[\s\S]+-----END (?:OPENSSH |RSA |EC |DSA |ENCRYPTED )?PRIVATE KEY-----\s*$/;

/** Exactly one of a password or a private key; the key must look like one (its content is never echoed). */
export function credentialsFrom(input: { password?: string | null; privateKey?: string | null; passphrase?: string | null }): SshCredentials {
  if (input.password && input.privateKey) {
    throw new BadUserInputError('input.privateKey', message('node.credentialsBoth'));
  }
  if (input.privateKey) {
    if (!PRIVATE_KEY.test(input.privateKey.trim())) {
      throw new BadUserInputError('input.privateKey', message('node.privateKeyInvalid'));
    }
    return { kind: 'PRIVATE_KEY', privateKey: `${input.privateKey.trim()}\n`, passphrase: input.passphrase || null };
  }
  if (input.passphrase) {
    throw new BadUserInputError('input.passphrase', message('node.passphraseWithoutKey'));
  }
  if (input.password) {
    return { kind: 'PASSWORD', password: input.password };
  }
  throw new BadUserInputError('input.password', message('node.credentialsMissing'));
}

export function sealCredentials(secrets: SecretBox, credentials: SshCredentials): Pick<NodeEntity, 'sshCredentialsSealed' | 'sshAuthMethod'> {
  return { sshCredentialsSealed: secrets.sealJson(credentials, SSH_CREDENTIALS_PURPOSE), sshAuthMethod: credentials.kind };
}

export function openCredentials(secrets: SecretBox, node: NodeEntity): SshCredentials | null {
  return node.sshCredentialsSealed ? secrets.openJson<SshCredentials>(node.sshCredentialsSealed, SSH_CREDENTIALS_PURPOSE) : null;
}

import { randomInt } from 'node:crypto';
import type { KubeObject } from './kube-object';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
/** `<6 chars>.<16 chars>` of [a-z0-9]. */
export const BOOTSTRAP_TOKEN_PATTERN = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;
/** Secret type of bootstrap tokens. */
export const BOOTSTRAP_TOKEN_SECRET_TYPE = 'bootstrap.kubernetes.io/token';
/** Extra groups must look like this (bootstrapapi.BootstrapGroupPattern). */
export const BOOTSTRAP_GROUP_PATTERN = /^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$/;

/** What a bootstrap token Secret should say. */
export interface BootstrapTokenOptions {
  /** 6 characters [a-z0-9]; random when absent. */
  id?: string;
  /** 16 characters [a-z0-9]; random when absent. */
  secret?: string;
  /** Added to `system:bootstrappers`; each must start with `system:bootstrappers:`. */
  extraGroups?: string[];
  /** When the token stops authenticating. */
  expiration?: Date;
  description?: string;
  /** `usage-bootstrap-authentication` (default true). */
  authentication?: boolean;
  /** `usage-bootstrap-signing` (default false). */
  signing?: boolean;
}

function randomString(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) {
    out += ALPHABET[randomInt(ALPHABET.length)];
  }
  return out;
}

/**
 * Builds the `kube-system/bootstrap-token-<id>` Secret of a bootstrap token (create it through the
 * API with any admin client, or `KubeSim.createBootstrapToken`) and returns the bearer token
 * `<id>.<secret>` it makes valid.
 * @see https://kubernetes.io/docs/reference/access-authn-authz/bootstrap-tokens/#bootstrap-token-secret-format
 */
export function bootstrapTokenSecret(options: BootstrapTokenOptions = {}): { token: string; secret: KubeObject } {
  const id = options.id ?? randomString(6);
  const secretPart = options.secret ?? randomString(16);
  const token = `${id}.${secretPart}`;
  if (!BOOTSTRAP_TOKEN_PATTERN.test(token)) {
    throw new Error(`bootstrap token ${token} does not match ${BOOTSTRAP_TOKEN_PATTERN.source}`);
  }
  const stringData: Record<string, string> = {
    'token-id': id,
    'token-secret': secretPart,
    'usage-bootstrap-authentication': String(options.authentication ?? true),
    'usage-bootstrap-signing': String(options.signing ?? false),
  };
  if (options.extraGroups && options.extraGroups.length > 0) {
    stringData['auth-extra-groups'] = options.extraGroups.join(',');
  }
  if (options.expiration) {
    stringData['expiration'] = options.expiration.toISOString().replace(/\.\d{3}Z$/, 'Z');
  }
  if (options.description) {
    stringData['description'] = options.description;
  }
  const data = Object.fromEntries(Object.entries(stringData).map(([k, v]) => [k, Buffer.from(v, 'utf8').toString('base64')]));
  return {
    token,
    secret: {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `bootstrap-token-${id}`, namespace: 'kube-system' },
      type: BOOTSTRAP_TOKEN_SECRET_TYPE,
      data,
    },
  };
}

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse, stringify } from 'yaml';

/**
 * The parts of a kubeconfig a client needs, resolved from its current
 * context (file references read, base64 data decoded).
 */
export interface KubeConnection {
  readonly server: string;
  readonly caPem?: string;
  readonly token?: string;
  readonly clientCertPem?: string;
  readonly clientKeyPem?: string;
  /** `tls-server-name`: the name to verify the server certificate against. */
  readonly tlsServerName?: string;
  readonly insecureSkipTlsVerify?: boolean;
}

interface KubeconfigDocument {
  'current-context'?: string;
  contexts?: { name: string; context: { cluster: string; user: string } }[];
  clusters?: { name: string; cluster: Record<string, unknown> }[];
  users?: { name: string; user: Record<string, unknown> }[];
}

/** Parses kubeconfig YAML; `baseDir` resolves relative file references. */
export function parseKubeconfig(text: string, baseDir = '/'): KubeConnection {
  const doc = (parse(text) ?? {}) as KubeconfigDocument;
  const contextName = doc['current-context'] ?? doc.contexts?.[0]?.name;
  const context = doc.contexts?.find((entry) => entry.name === contextName)?.context;
  const cluster = doc.clusters?.find((entry) => entry.name === context?.cluster)?.cluster ?? doc.clusters?.[0]?.cluster;
  const user = doc.users?.find((entry) => entry.name === context?.user)?.user ?? doc.users?.[0]?.user ?? {};
  if (cluster === undefined || typeof cluster['server'] !== 'string') {
    throw new Error('kubeconfig has no cluster with a server');
  }
  const pem = (data: unknown, file: unknown): string | undefined => {
    if (typeof data === 'string' && data !== '') {
      return Buffer.from(data, 'base64').toString();
    }
    if (typeof file === 'string' && file !== '') {
      return readFileSync(resolve(baseDir, file), 'utf8');
    }
    return undefined;
  };
  const tokenFile = user['tokenFile'] ?? user['token-file'];
  return {
    server: cluster['server'].replace(/\/$/, ''),
    caPem: pem(cluster['certificate-authority-data'], cluster['certificate-authority']),
    token: typeof user['token'] === 'string'
      ? user['token']
      : typeof tokenFile === 'string' ? readFileSync(resolve(baseDir, tokenFile), 'utf8').trim() : undefined,
    clientCertPem: pem(user['client-certificate-data'], user['client-certificate']),
    clientKeyPem: pem(user['client-key-data'], user['client-key']),
    tlsServerName: typeof cluster['tls-server-name'] === 'string' ? cluster['tls-server-name'] : undefined,
    insecureSkipTlsVerify: cluster['insecure-skip-tls-verify'] === true,
  };
}

/** How a written kubeconfig names its credentials. */
export type KubeconfigUser =
  | { readonly token: string }
  | { readonly clientCertificateFile: string; readonly clientKeyFile: string }
  | { readonly clientCertPem: string; readonly clientKeyPem: string };

/** Writes a single-context kubeconfig (CA embedded as data). */
export function kubeconfigYaml(options: {
  readonly server: string;
  readonly caPem?: string;
  readonly tlsServerName?: string;
  readonly user: KubeconfigUser;
  readonly userName?: string;
  readonly clusterName?: string;
}): string {
  const clusterName = options.clusterName ?? 'cluster';
  const userName = options.userName ?? 'user';
  const user: Record<string, string> = {};
  if ('token' in options.user) {
    user['token'] = options.user.token;
  } else if ('clientCertificateFile' in options.user) {
    user['client-certificate'] = options.user.clientCertificateFile;
    user['client-key'] = options.user.clientKeyFile;
  } else {
    user['client-certificate-data'] = Buffer.from(options.user.clientCertPem).toString('base64');
    user['client-key-data'] = Buffer.from(options.user.clientKeyPem).toString('base64');
  }
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{
      name: clusterName,
      cluster: {
        server: options.server,
        ...(options.caPem === undefined ? {} : { 'certificate-authority-data': Buffer.from(options.caPem).toString('base64') }),
        ...(options.tlsServerName === undefined ? {} : { 'tls-server-name': options.tlsServerName }),
      },
    }],
    users: [{ name: userName, user }],
    contexts: [{ name: userName, context: { cluster: clusterName, user: userName } }],
    'current-context': userName,
    preferences: {},
  });
}

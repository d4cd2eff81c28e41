import { stringify } from 'yaml';

/** Credentials a kubeconfig user entry may carry. */
export type KubeconfigCredentials = { token: string } | { certPem: string; keyPem: string } | Record<string, never>;

export interface KubeconfigOptions {
  server: string;
  /** CA to trust (omit for plain HTTP). */
  caCertPem?: string;
  credentials: KubeconfigCredentials;
  clusterName?: string;
  userName?: string;
  contextName?: string;
}

const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

/**
 * Writes a kubeconfig (YAML) with embedded CA data and either client certificate data or a bearer
 * token, usable as-is by kubectl and @kubernetes/client-node.
 * @see https://kubernetes.io/docs/concepts/configuration/organize-cluster-access-kubeconfig/
 */
export function buildKubeconfig(options: KubeconfigOptions): string {
  const clusterName = options.clusterName ?? 'kube-sim';
  const userName = options.userName ?? 'kube-sim-admin';
  const contextName = options.contextName ?? clusterName;
  const cluster: Record<string, string> = { server: options.server };
  if (options.caCertPem) {
    cluster['certificate-authority-data'] = b64(options.caCertPem);
  }
  const user: Record<string, string> = {};
  if ('token' in options.credentials) {
    user['token'] = options.credentials.token;
  } else if ('certPem' in options.credentials) {
    user['client-certificate-data'] = b64(options.credentials.certPem);
    user['client-key-data'] = b64(options.credentials.keyPem);
  }
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: clusterName, cluster }],
    users: [{ name: userName, user }],
    contexts: [{ name: contextName, context: { cluster: clusterName, user: userName } }],
    'current-context': contextName,
    preferences: {},
  });
}

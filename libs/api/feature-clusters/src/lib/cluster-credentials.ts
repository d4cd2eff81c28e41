import { parse } from 'yaml';

/** How the service authenticates to a cluster's API server. Sealed at rest; never returned. */
export type ClusterCredentials =
  | { readonly kind: 'KUBECONFIG'; readonly kubeconfig: string }
  | { readonly kind: 'TOKEN'; readonly token: string; readonly caCert: string | null };

export const CREDENTIALS_PURPOSE = 'cluster-credentials';

interface KubeconfigShape {
  'current-context'?: string;
  contexts?: Array<{ name?: string; context?: { cluster?: string; user?: string } }>;
  clusters?: Array<{ name?: string; cluster?: { server?: string; 'certificate-authority'?: string; 'insecure-skip-tls-verify'?: unknown; 'proxy-url'?: unknown } }>;
  users?: Array<{ name?: string; user?: Record<string, unknown> }>;
}

/**
 * Checks that a kubeconfig can be used as is: YAML, a current context that names a
 * cluster with a server and a user with a token, client certificate or basic credentials.
 * Returns a problem (naming what is missing) or null. Never echoes the content.
 */
export function checkKubeconfig(text: string): string | null {
  let config: KubeconfigShape;
  try {
    config = parse(text) as KubeconfigShape;
  } catch (error) {
    return `is not valid YAML (${(error as Error).message.split('\n')[0]})`;
  }
  if (!config || typeof config !== 'object') {
    return 'is not a kubeconfig document';
  }
  const contextName = config['current-context'];
  const context = config.contexts?.find((entry) => entry.name === contextName)?.context;
  if (!contextName || !context) {
    return 'has no current-context that names an entry in contexts';
  }
  const cluster = config.clusters?.find((entry) => entry.name === context.cluster)?.cluster;
  if (!cluster?.server) {
    return `has no server for cluster "${context.cluster ?? ''}" of the current context`;
  }
  if ('proxy-url' in cluster) {
    return 'sets proxy-url, which the service does not use: it connects to the API server directly and checks the address it connects to; remove proxy-url';
  }
  if (cluster && 'certificate-authority' in cluster) {
    return 'names its CA as a file (certificate-authority); embed it as certificate-authority-data, since the service cannot read files of your machine';
  }
  const user = config.users?.find((entry) => entry.name === context.user)?.user;
  // Plugins would run commands and file references would read files on the installer service.
  const external = user && ['exec', 'auth-provider', 'tokenFile', 'client-certificate', 'client-key'].find((key) => key in user);
  if (external) {
    return `user "${context.user ?? ''}" uses ${external}, which would run a command or read a file on the installer service; embed a token or client-certificate-data and client-key-data instead`;
  }
  const usable = user && ['token', 'client-certificate-data', 'username'].some((key) => key in user);
  if (!usable) {
    return `has no credentials for user "${context.user ?? ''}" of the current context (token or client certificate)`;
  }
  return null;
}

/** Whether the current context's cluster sets `insecure-skip-tls-verify: true` (the document passed {@link checkKubeconfig}). */
export function kubeconfigSkipsTlsVerify(text: string): boolean {
  const config = parse(text) as KubeconfigShape;
  const contextName = config['current-context'];
  const clusterName = config.contexts?.find((entry) => entry.name === contextName)?.context?.cluster;
  const value = config.clusters?.find((entry) => entry.name === clusterName)?.cluster?.['insecure-skip-tls-verify'];
  return value === true || value === 'true';
}

export function checkPem(text: string, label: string): string | null {
  const pattern = new RegExp(`^-----BEGIN ${label}-----\\r?\\n[A-Za-z0-9+/=\\r\\n]+-----END ${label}-----\\s*$`);
  const blocks = text.trim().split(/(?<=-----END [A-Z ]+-----)\s*/).filter(Boolean);
  return blocks.length > 0 && blocks.every((block) => pattern.test(block.trim())) ? null : `is not a PEM ${label.toLowerCase()} (-----BEGIN ${label}-----)`;
}

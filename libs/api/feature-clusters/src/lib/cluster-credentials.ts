import { parse } from 'yaml';
import { type CodedText, message } from '@ccos/shared/messages';

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
export function checkKubeconfig(text: string): CodedText | null {
  let config: KubeconfigShape;
  try {
    config = parse(text) as KubeconfigShape;
  } catch (error) {
    return message('kubeconfig.notYaml', { error: (error as Error).message.split('\n')[0] });
  }
  if (!config || typeof config !== 'object') {
    return message('kubeconfig.notKubeconfig');
  }
  const contextName = config['current-context'];
  const context = config.contexts?.find((entry) => entry.name === contextName)?.context;
  if (!contextName || !context) {
    return message('kubeconfig.noCurrentContext');
  }
  const cluster = config.clusters?.find((entry) => entry.name === context.cluster)?.cluster;
  if (!cluster?.server) {
    return message('kubeconfig.noServer', { cluster: context.cluster ?? '' });
  }
  if ('proxy-url' in cluster) {
    return message('kubeconfig.proxyUrl');
  }
  if (cluster && 'certificate-authority' in cluster) {
    return message('kubeconfig.caFile');
  }
  const user = config.users?.find((entry) => entry.name === context.user)?.user;
  // Plugins would run commands and file references would read files on the installer service.
  const external = user && ['exec', 'auth-provider', 'tokenFile', 'client-certificate', 'client-key'].find((key) => key in user);
  if (external) {
    return message('kubeconfig.externalCredentials', { user: context.user ?? '', external });
  }
  const usable = user && ['token', 'client-certificate-data', 'username'].some((key) => key in user);
  if (!usable) {
    return message('kubeconfig.noCredentials', { user: context.user ?? '' });
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

/** One or more PEM certificates (a CA bundle), nothing else. */
export function checkPemCertificates(text: string): CodedText | null {
  const pattern = /^-----BEGIN CERTIFICATE-----\r?\n[A-Za-z0-9+/=\r\n]+-----END CERTIFICATE-----\s*$/;
  const blocks = text.trim().split(/(?<=-----END [A-Z ]+-----)\s*/).filter(Boolean);
  return blocks.length > 0 && blocks.every((block) => pattern.test(block.trim())) ? null : message('cluster.notPemCertificate');
}

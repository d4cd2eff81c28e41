import { parse, stringify } from 'yaml';
import { bare, type CodedText, type Message, message } from '@ccos/shared/messages';

/** Why a bootstrap kubeconfig cannot be given the run's token. */
export class BootstrapKubeconfigError extends Error {
  override readonly name = 'BootstrapKubeconfigError';
  /** The message by its code in the catalogue. */
  readonly coded: Message;

  constructor(text: CodedText) {
    super(text.message);
    this.coded = bare(text);
  }
}

/**
 * The `--bootstrap-kubeconfig` path of kubelet.service as `systemctl cat kubelet` prints it
 * (the unit and its drop-ins: flags on ExecStart or in an Environment= line, as kubeadm's
 * 10-kubeadm.conf has them). The last one wins, as in a unit's later drop-ins. Null when none.
 */
export function bootstrapKubeconfigPath(unitText: string): string | null {
  const found = [...unitText.matchAll(/--bootstrap-kubeconfig(?:=|\s+)["']?([^\s"'\\]+)/g)].map((match) => match[1]);
  const path = found.at(-1) ?? null;
  return path !== null && path.startsWith('/') ? path : null;
}

interface KubeconfigDocument {
  clusters?: Array<{ name?: string; cluster?: Record<string, unknown> }>;
  contexts?: Array<{ name?: string; context?: { cluster?: string; user?: string; namespace?: string } }>;
  users?: Array<{ name?: string; user?: Record<string, unknown> }>;
  'current-context'?: string;
  [key: string]: unknown;
}

/**
 * The bootstrap kubeconfig with its user replaced by the run's bearer token: the API server,
 * its CA and `tls-server-name` stay as the Ignition wrote them; the shared credential (token,
 * client certificate, exec plugin) is dropped, so kubelet can only bootstrap as this run.
 */
export function withBootstrapToken(kubeconfigText: string, token: string): string {
  let document: KubeconfigDocument;
  try {
    document = parse(kubeconfigText) as KubeconfigDocument;
  } catch (error) {
    throw new BootstrapKubeconfigError(message('agent.kubeconfig.notYaml', { error: (error as Error).message.split('\n')[0] ?? '' }));
  }
  if (document === null || typeof document !== 'object') {
    throw new BootstrapKubeconfigError(message('agent.kubeconfig.notKubeconfig'));
  }
  const contextName = document['current-context'] ?? document.contexts?.[0]?.name;
  const context = document.contexts?.find((entry) => entry.name === contextName)?.context;
  const cluster = document.clusters?.find((entry) => entry.name === context?.cluster)?.cluster;
  if (!context || typeof cluster?.['server'] !== 'string') {
    throw new BootstrapKubeconfigError(message('agent.kubeconfig.noServer'));
  }
  const userName = 'ccos-scaler-install-run';
  const updated: KubeconfigDocument = {
    ...document,
    clusters: document.clusters?.filter((entry) => entry.name === context.cluster),
    contexts: [{ name: contextName, context: { ...context, user: userName } }],
    users: [{ name: userName, user: { token } }],
    'current-context': contextName,
  };
  return stringify(updated);
}

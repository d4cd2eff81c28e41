import { readFileSync } from 'node:fs';
import { hostname, networkInterfaces } from 'node:os';
import { parse } from 'yaml';
import { onHost, readLabConfig } from '../host-state';

/**
 * The kubelet flags and KubeletConfiguration fields the stand-in honours.
 * Unknown flags are accepted and ignored (a real kubelet knows hundreds).
 *
 * @see https://kubernetes.io/docs/reference/command-line-tools-reference/kubelet/
 * @see https://kubernetes.io/docs/reference/config-api/kubelet-config.v1beta1/
 */
export interface Taint {
  readonly key: string;
  readonly value?: string;
  readonly effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
}

export interface KubeletOptions {
  readonly nodeName: string;
  readonly nodeIp: string;
  readonly kubeconfig: string;
  readonly bootstrapKubeconfig: string | undefined;
  readonly certDir: string;
  readonly nodeLabels: Readonly<Record<string, string>>;
  readonly taints: readonly Taint[];
  /** `--provider-id` or the config's providerID: kubelet sets spec.providerID once, at registration. */
  readonly providerId: string | null;
  readonly serverTlsBootstrap: boolean;
  readonly failSwapOn: boolean;
  readonly maxPods: number;
  readonly heartbeatSeconds: number;
  readonly csrTimeoutSeconds: number;
  readonly readyDelaySeconds: number;
  /** `expirationSeconds` of serving CSRs; null leaves it to the signer. */
  readonly servingCertificateSeconds: number | null;
}

/** Labels in the kubernetes.io namespaces a kubelet may set on itself. */
const ALLOWED_LABEL_PREFIXES = ['kubelet.kubernetes.io/', 'node.kubernetes.io/', 'node-role.kubernetes.io/'];
const ALLOWED_LABELS = new Set([
  'kubernetes.io/hostname', 'kubernetes.io/instance-type', 'kubernetes.io/os', 'kubernetes.io/arch',
  'beta.kubernetes.io/instance-type', 'beta.kubernetes.io/os', 'beta.kubernetes.io/arch',
  'failure-domain.beta.kubernetes.io/zone', 'failure-domain.beta.kubernetes.io/region',
  'topology.kubernetes.io/zone', 'topology.kubernetes.io/region', 'node.kubernetes.io/instance-type',
]);

/** A flag value problem the real kubelet also refuses to start with. */
export class KubeletFlagError extends Error {}

/** Parses `--flag=value` / `--flag value` arguments; repeated map flags merge. */
export function parseFlags(argv: readonly string[]): Map<string, string[]> {
  const flags = new Map<string, string[]>();
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i] ?? '';
    if (!arg.startsWith('-')) {
      continue;
    }
    const body = arg.replace(/^--?/, '');
    const eq = body.indexOf('=');
    let name: string;
    let value: string;
    if (eq >= 0) {
      name = body.slice(0, eq);
      value = body.slice(eq + 1);
    } else if (i + 1 < argv.length && !(argv[i + 1] ?? '').startsWith('-')) {
      name = body;
      value = argv[i + 1] ?? '';
      i += 1;
    } else {
      name = body;
      value = 'true';
    }
    flags.set(name, [...(flags.get(name) ?? []), value]);
  }
  return flags;
}

/** `a=b,c` → `{ a: 'b', c: '' }`, rejecting labels a kubelet may not set. */
export function parseNodeLabels(values: readonly string[]): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const value of values) {
    for (const item of value.split(',').map((part) => part.trim()).filter(Boolean)) {
      const eq = item.indexOf('=');
      const key = eq >= 0 ? item.slice(0, eq) : item;
      labels[key] = eq >= 0 ? item.slice(eq + 1) : '';
    }
  }
  const refused = Object.keys(labels).filter((key) => {
    const domain = key.includes('/') ? key.slice(0, key.indexOf('/')) : '';
    const inKubernetesNamespace = /(^|\.)(kubernetes\.io|k8s\.io)$/.test(domain);
    return inKubernetesNamespace && !ALLOWED_LABELS.has(key) && !ALLOWED_LABEL_PREFIXES.some((prefix) => key.startsWith(prefix));
  });
  if (refused.length > 0) {
    throw new KubeletFlagError(
      `unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels: [${refused.join(' ')}]\n` +
      `--node-labels in the 'kubernetes.io' namespace must begin with an allowed prefix (${ALLOWED_LABEL_PREFIXES.map((p) => p.slice(0, -1)).join(', ')}) or be in the specifically allowed set (${[...ALLOWED_LABELS].join(', ')})`,
    );
  }
  return labels;
}

/** `key=value:Effect,key:Effect` → taints. */
export function parseTaints(values: readonly string[]): Taint[] {
  const taints: Taint[] = [];
  for (const value of values) {
    for (const item of value.split(',').map((part) => part.trim()).filter(Boolean)) {
      const match = /^([^=:]+)(?:=([^:]*))?:(NoSchedule|PreferNoSchedule|NoExecute)$/.exec(item);
      if (match?.[1] === undefined || match[3] === undefined) {
        throw new KubeletFlagError(`invalid taint spec: ${item}`);
      }
      taints.push({ key: match[1], ...(match[2] === undefined ? {} : { value: match[2] }), effect: match[3] as Taint['effect'] });
    }
  }
  return taints;
}

/** `10s`, `1m30s`, `15m`, `900` → seconds. */
export function parseDuration(value: string): number {
  if (/^\d+(\.\d+)?$/.test(value)) {
    return Number(value);
  }
  const units: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600 };
  let total = 0;
  for (const match of value.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) {
    total += Number(match[1]) * (units[match[2] ?? 's'] ?? 1);
  }
  return total;
}

/** The first IPv4 address of a non-loopback interface (kubelet's default node IP). */
export function defaultNodeIp(): string {
  for (const addresses of Object.values(networkInterfaces())) {
    for (const address of addresses ?? []) {
      if (address.family === 'IPv4' && !address.internal) {
        return address.address;
      }
    }
  }
  return '127.0.0.1';
}

/** Resolves the effective options from flags, the config file, the lab's host config and the environment. */
export function resolveOptions(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): KubeletOptions {
  const flags = parseFlags(argv);
  const flag = (name: string) => flags.get(name)?.at(-1);
  const configPath = flag('config');
  let config: Record<string, unknown> = {};
  if (configPath !== undefined) {
    try {
      config = (parse(readFileSync(onHost(configPath), 'utf8')) ?? {}) as Record<string, unknown>;
    } catch (cause) {
      throw new KubeletFlagError(`failed to load Kubelet config file ${configPath}, error failed to read kubelet config file "${configPath}", error: ${cause instanceof Error ? cause.message : String(cause)}`);
    }
  }
  const lab = readLabConfig();
  const configTaints = Array.isArray(config['registerWithTaints'])
    ? (config['registerWithTaints'] as Taint[])
    : [];
  const duration = (value: unknown, fallback: number) => (typeof value === 'string' ? parseDuration(value) : fallback);
  const csrTimeout = flag('lab-csr-timeout') ?? env['KUBELET_CSR_TIMEOUT'];
  const heartbeatFlag = flag('node-status-update-frequency');
  return {
    nodeName: (flag('hostname-override') ?? hostname()).toLowerCase(),
    nodeIp: flag('node-ip') ?? defaultNodeIp(),
    kubeconfig: flag('kubeconfig') ?? '/var/lib/kubelet/kubeconfig',
    bootstrapKubeconfig: flag('bootstrap-kubeconfig'),
    certDir: flag('cert-dir') ?? '/var/lib/kubelet/pki',
    nodeLabels: parseNodeLabels(flags.get('node-labels') ?? []),
    taints: [...configTaints, ...parseTaints(flags.get('register-with-taints') ?? [])],
    providerId: flag('provider-id') ?? (typeof config['providerID'] === 'string' && config['providerID'] !== '' ? config['providerID'] : null),
    serverTlsBootstrap: config['serverTLSBootstrap'] !== false,
    failSwapOn: (flag('fail-swap-on') ?? String(config['failSwapOn'] ?? 'true')) !== 'false',
    maxPods: Number(flag('max-pods') ?? config['maxPods'] ?? 110),
    heartbeatSeconds: heartbeatFlag !== undefined
      ? parseDuration(heartbeatFlag)
      : lab.kubeletHeartbeatSeconds ?? duration(config['nodeStatusUpdateFrequency'], 10),
    csrTimeoutSeconds: csrTimeout !== undefined ? parseDuration(csrTimeout) : lab.kubeletCsrTimeoutSeconds ?? 900,
    readyDelaySeconds: duration(env['KUBELET_READY_DELAY'], lab.kubeletReadyDelaySeconds ?? 2),
    servingCertificateSeconds: lab.kubeletServingCertificateSeconds ?? null,
  };
}

import type { Label, Taint } from '@ccos/shared/domain';

/**
 * Label keys in the kubernetes.io / k8s.io namespaces a kubelet may set on
 * its own Node (NodeRestriction); kubelet refuses to start with any other.
 *
 * @see https://kubernetes.io/docs/reference/access-authn-authz/admission-controllers/#noderestriction
 */
const ALLOWED_PREFIXES = ['kubelet.kubernetes.io/', 'node.kubernetes.io/', 'node-role.kubernetes.io/'];
const ALLOWED_KEYS = new Set([
  'kubernetes.io/hostname', 'kubernetes.io/instance-type', 'kubernetes.io/os', 'kubernetes.io/arch',
  'beta.kubernetes.io/instance-type', 'beta.kubernetes.io/os', 'beta.kubernetes.io/arch',
  'failure-domain.beta.kubernetes.io/zone', 'failure-domain.beta.kubernetes.io/region',
  'topology.kubernetes.io/zone', 'topology.kubernetes.io/region', 'node.kubernetes.io/instance-type',
]);

/** Label keys kubelet would refuse in `--node-labels`. */
export function refusedKubeletLabels(labels: readonly Label[]): string[] {
  return labels.map((label) => label.key).filter((key) => {
    const slash = key.indexOf('/');
    const domain = slash >= 0 ? key.slice(0, slash) : '';
    return /(^|\.)(kubernetes\.io|k8s\.io)$/.test(domain) && !ALLOWED_KEYS.has(key) && !ALLOWED_PREFIXES.some((prefix) => key.startsWith(prefix));
  });
}

/**
 * `--node-labels=k=v,… --register-with-taints=k=v:Effect,…`. Keys and
 * values have passed the domain's label rules (no spaces, quotes or `$`),
 * so the line is safe inside the double quotes of an EnvironmentFile.
 */
export function kubeletExtraArgs(labels: readonly Label[], taints: readonly Taint[]): string {
  const args: string[] = [];
  if (labels.length > 0) {
    args.push(`--node-labels=${labels.map((label) => `${label.key}=${label.value}`).join(',')}`);
  }
  if (taints.length > 0) {
    args.push(`--register-with-taints=${taints.map((taint) => `${taint.key}${taint.value ? `=${taint.value}` : ''}:${taint.effect}`).join(',')}`);
  }
  return args.join(' ');
}

/**
 * /etc/sysconfig/kubelet with KUBELET_EXTRA_ARGS set (kubelet.service reads
 * it as EnvironmentFile), keeping any other lines an existing file has.
 */
export function kubeletSysconfig(existing: string | null, labels: readonly Label[], taints: readonly Taint[]): string {
  const line = `KUBELET_EXTRA_ARGS="${kubeletExtraArgs(labels, taints)}"`;
  if (existing === null || existing.trim() === '') {
    return `# Node labels and taints, written by the ccos-scaler agent (boot-worker).\n${line}\n`;
  }
  const lines = existing.replace(/\n$/, '').split('\n');
  const index = lines.findIndex((entry) => /^\s*(export\s+)?KUBELET_EXTRA_ARGS=/.test(entry));
  if (index >= 0) {
    lines[index] = line;
  } else {
    lines.push(line);
  }
  return `${lines.join('\n')}\n`;
}

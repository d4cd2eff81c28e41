import { type Label, type Taint, kubeletMaySetLabel } from '@ccos/shared/domain';

/** Label keys kubelet would refuse in `--node-labels`. */
export function refusedKubeletLabels(labels: readonly Label[]): string[] {
  return labels.map((label) => label.key).filter((key) => !kubeletMaySetLabel(key));
}

/**
 * `--node-labels=k=v,… --register-with-taints=k=v:Effect,…`. Keys and
 * values have passed the domain's label rules (no spaces, quotes or `$`),
 * so the line is safe inside the double quotes of an EnvironmentFile.
 */
export function kubeletExtraArgs(labels: readonly Label[], taints: readonly Taint[], providerId: string | null = null): string {
  const args: string[] = [];
  if (providerId !== null) {
    // Checked by the agent config (ccos://<cluster>/<node id>, no spaces, quotes or `$`).
    args.push(`--provider-id=${providerId}`);
  }
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
export function kubeletSysconfig(existing: string | null, labels: readonly Label[], taints: readonly Taint[], providerId: string | null = null): string {
  const line = `KUBELET_EXTRA_ARGS="${kubeletExtraArgs(labels, taints, providerId)}"`;
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

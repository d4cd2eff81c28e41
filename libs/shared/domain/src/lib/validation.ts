import { type CodedText, message } from '@ccos/shared/messages';

/**
 * Input rules shared by the API (authoritative) and the console (early feedback).
 * Each check returns `null` when the value is fine, or a coded message that says what is wrong
 * without naming the field (the API puts the field beside it). Pure: no Node or browser APIs.
 */
export type Problem = CodedText | null;

/** Whether a key belongs to a label or a taint: the same rules, each named in its messages. */
type KeyKind = 'label' | 'taint';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** RFC 1123 host name as Kubernetes requires for Node names: lower case, dot-separated labels. */
export function checkHostname(value: string): Problem {
  if (value.length === 0) {
    return message('validation.empty');
  }
  if (value.length > 253) {
    return message('validation.hostnameTooLong', { length: value.length, max: 253 });
  }
  const bad = value.split('.').find((label) => !DNS_LABEL.test(label));
  if (bad !== undefined) {
    return message('validation.hostnameLabel', { label: shorten(bad) });
  }
  return null;
}

/** Dotted-quad IPv4 without leading zeros. */
export function isIPv4(value: string): boolean {
  const parts = value.split('.');
  return parts.length === 4 && parts.every((part) => /^(0|[1-9]\d{0,2})$/.test(part) && Number(part) <= 255);
}

/** IPv6 in any standard textual form, including `::` compression and an embedded IPv4 tail. No zone ids. */
export function isIPv6(value: string): boolean {
  if (value.length > 45 || !/^[0-9a-fA-F:.]+$/.test(value)) {
    return false;
  }
  const halves = value.split('::');
  if (halves.length > 2) {
    return false;
  }
  const groups = (text: string): string[] | null => (text === '' ? [] : text.split(':'));
  const head = groups(halves[0]);
  const tail = halves.length === 2 ? groups(halves[1]) : [];
  if (head === null || tail === null) {
    return false;
  }
  const all = [...head, ...tail];
  let width = 0;
  for (let index = 0; index < all.length; index += 1) {
    const group = all[index];
    const last = index === all.length - 1;
    if (last && group.includes('.')) {
      if (!isIPv4(group)) {
        return false;
      }
      width += 2;
    } else if (/^[0-9a-fA-F]{1,4}$/.test(group)) {
      width += 1;
    } else {
      return false;
    }
  }
  return halves.length === 2 ? width < 8 : width === 8;
}

export function checkIp(value: string): Problem {
  return isIPv4(value) || isIPv6(value) ? null : message('validation.notIp', { value: shorten(value) });
}

export function checkPort(value: number): Problem {
  return Number.isInteger(value) && value >= 1 && value <= 65535 ? null : message('validation.notPort', { value: String(value) });
}

/** A POSIX-style login name: what sshd and useradd accept, nothing a shell would interpret. */
export function checkSshUser(value: string): Problem {
  return /^[a-z_][a-z0-9_.-]{0,31}$/i.test(value)
    ? null
    : message('validation.sshUser', { value: shorten(value) });
}

const LABEL_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;

/** Kubernetes label key: optional DNS-subdomain prefix and '/', then a name of at most 63 characters. */
export function checkLabelKey(key: string, kind: KeyKind = 'label'): Problem {
  const slash = key.lastIndexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : null;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (prefix !== null && (prefix.length > 253 || checkHostname(prefix) !== null)) {
    return message('validation.keyPrefix', { kind, key: shorten(key) });
  }
  if (!LABEL_NAME.test(name)) {
    return message('validation.key', { kind, key: shorten(key) });
  }
  return null;
}

export function checkLabelValue(value: string, kind: KeyKind = 'label'): Problem {
  return LABEL_VALUE.test(value) ? null : message('validation.value', { kind, value: shorten(value) });
}

export interface Label {
  readonly key: string;
  readonly value: string;
}

export function checkLabels(labels: readonly Label[]): Problem {
  const seen = new Set<string>();
  for (const label of labels) {
    const problem = checkLabelKey(label.key) ?? checkLabelValue(label.value);
    if (problem) {
      return problem;
    }
    if (seen.has(label.key)) {
      return message('validation.labelTwice', { key: shorten(label.key) });
    }
    seen.add(label.key);
  }
  return null;
}

/**
 * Label keys in the kubernetes.io / k8s.io namespaces a kubelet may set on its own Node
 * with `--node-labels` (NodeRestriction); it refuses to start with any other. Like
 * OpenShift's kubelet, node-role.kubernetes.io/ is allowed so workers can carry their role.
 * @see https://kubernetes.io/docs/reference/access-authn-authz/admission-controllers/#noderestriction
 */
const KUBELET_LABEL_PREFIXES = ['kubelet.kubernetes.io/', 'node.kubernetes.io/', 'node-role.kubernetes.io/'];
const KUBELET_LABEL_KEYS = new Set([
  'kubernetes.io/hostname', 'kubernetes.io/instance-type', 'kubernetes.io/os', 'kubernetes.io/arch',
  'beta.kubernetes.io/instance-type', 'beta.kubernetes.io/os', 'beta.kubernetes.io/arch',
  'failure-domain.beta.kubernetes.io/zone', 'failure-domain.beta.kubernetes.io/region',
  'topology.kubernetes.io/zone', 'topology.kubernetes.io/region', 'node.kubernetes.io/instance-type',
]);

/** Whether a kubelet may set this label on its own Node. */
export function kubeletMaySetLabel(key: string): boolean {
  const slash = key.indexOf('/');
  const domain = slash >= 0 ? key.slice(0, slash) : '';
  return !/(^|\.)(kubernetes\.io|k8s\.io)$/.test(domain) || KUBELET_LABEL_KEYS.has(key) || KUBELET_LABEL_PREFIXES.some((prefix) => key.startsWith(prefix));
}

/** Labels for a new node: valid, unique, and settable by its kubelet. */
export function checkNodeLabels(labels: readonly Label[]): Problem {
  const refused = labels.map((label) => label.key).filter((key) => !kubeletMaySetLabel(key));
  if (refused.length > 0) {
    return message('validation.labelKubernetesNamespace', { key: shorten(refused[0]), allowed: KUBELET_LABEL_PREFIXES.join(', ') });
  }
  return checkLabels(labels);
}

export const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] as const;
export type TaintEffect = (typeof TAINT_EFFECTS)[number];

export interface Taint {
  readonly key: string;
  readonly value?: string | null;
  readonly effect: TaintEffect;
}

export function checkTaints(taints: readonly Taint[]): Problem {
  for (const taint of taints) {
    const problem = checkLabelKey(taint.key, 'taint') ?? (taint.value ? checkLabelValue(taint.value, 'taint') : null);
    if (problem) {
      return problem;
    }
    if (!(TAINT_EFFECTS as readonly string[]).includes(taint.effect)) {
      return message('validation.taintEffect', { effect: shorten(String(taint.effect)), effects: TAINT_EFFECTS.join(', ') });
    }
  }
  return null;
}

/** A cluster name: a DNS label, since it is shown in paths and used in resource names. */
export function checkClusterName(value: string): Problem {
  return DNS_LABEL.test(value) ? null : message('validation.clusterName', { value: shorten(value) });
}

/** An API server URL: https (or http for a lab) with a host and an optional port, nothing else. */
export function checkApiServerUrl(value: string): Problem {
  const match = /^(https?):\/\/(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?\/?$/.exec(value);
  if (!match) {
    return message('validation.apiServerUrl', { value: shorten(value) });
  }
  const host = match[2].startsWith('[') ? match[2].slice(1, -1) : match[2];
  if (match[2].startsWith('[') ? !isIPv6(host) : checkIp(host) !== null && checkHostname(host.toLowerCase()) !== null) {
    return message('validation.apiServerUrlHost', { value: shorten(value) });
  }
  if (match[3] !== undefined && checkPort(Number(match[3])) !== null) {
    return message('validation.apiServerUrlPort', { value: shorten(value) });
  }
  return null;
}

/** A console user name: 2–32 lower-case letters, digits, '.', '_' or '-', starting with a letter. */
export function checkUsername(value: string): Problem {
  return /^[a-z][a-z0-9._-]{1,31}$/.test(value) ? null : message('validation.username');
}

/** How long a console password may be. */
export const PASSWORD_LENGTH = { min: 12, max: 256 } as const;

export function checkPassword(value: string): Problem {
  return value.length >= PASSWORD_LENGTH.min && value.length <= PASSWORD_LENGTH.max ? null : message('validation.passwordLength', PASSWORD_LENGTH);
}

/** Shortens and escapes a hostile value before it is quoted back in a message. */
export function shorten(value: string, max = 64): string {
  const visible = JSON.stringify(value).slice(1, -1);
  return visible.length > max ? `${visible.slice(0, max)}…` : visible;
}

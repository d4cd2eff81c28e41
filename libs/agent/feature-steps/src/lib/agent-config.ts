import { isJsonObject, type JsonObject, type TlsPin } from '@ccos/agent/util-host';
import {
  checkHostname, checkIp, checkLabels, checkTaints, INSTALL_STEPS, isInstallStep, shorten,
  type InstallRunPurpose, type InstallStep, type Label, type Taint, type TaintEffect,
} from '@ccos/shared/domain';

/** What a run needs from the host, as the service decided. */
export interface Requirements {
  /** e.g. `4.18`: `uname -r` must be at least this. */
  readonly minKernel: string;
  readonly minMemoryBytes: number;
  readonly minCpus: number;
  readonly maxClockSkewSeconds: number;
}

/**
 * `config.json`, written by the installer service next to the run's state
 * (mode 0600: it holds the run's token).
 */
export interface AgentConfig {
  /** Base URL of the installer service, without a trailing slash. */
  readonly apiUrl: string;
  /**
   * How to recognise the installer service on an https `apiUrl` (null on http, which
   * the service writes only when its operator allowed plain HTTP). Every request to
   * the service (events, run state, artifacts, diagnostics) is checked against it,
   * never against the system CAs.
   */
  readonly serviceTls: TlsPin | null;
  /**
   * sha256 (hex) of the exact bytes of `GET /artifacts/manifest` when the run started.
   * The manifest's checksums are trusted only after its bytes match this, so every
   * file the agent installs is tied to what came over SSH.
   */
  readonly artifactManifestSha256: string;
  readonly runId: string;
  readonly token: string;
  readonly nodeName: string;
  readonly nodeIp: string;
  readonly vip: string;
  readonly labels: readonly Label[];
  readonly taints: readonly Taint[];
  /**
   * kubelet's `--provider-id` (`ccos://<cluster>/<node id>`) for a node installed through a node
   * group, so cluster-autoscaler matches the Node to its instance; null for any other node.
   * spec.providerID cannot change once the Node is registered.
   */
  readonly providerId: string | null;
  readonly startStep: InstallStep;
  /** PEM of the machine config server's CA; null means "use the system CAs". */
  readonly machineConfigCaCert: string | null;
  /** Absolute; holds agent.pid, agent.log, spool.jsonl, downloads. */
  readonly stateDir: string;
  readonly requirements: Requirements;
  readonly timeouts: { readonly nodeReadySeconds: number };
  /**
   * The bearer token of the bootstrap identity the service minted for this run alone;
   * START_KUBELET puts it into kubelet's bootstrap kubeconfig in place of the Ignition's shared
   * credential. Null (or absent): the Ignition's kubeconfig is left as it is.
   */
  readonly kubeletBootstrapToken: string | null;
  /**
   * INSTALL (or absent): a host becomes a node. APPLY: a rollout's run on a node that joined
   * already: only `steps` run, and START_KUBELET restarts kubelet on what they wrote.
   */
  readonly purpose: InstallRunPurpose;
  /** The steps to run, in install order; null (or absent): every step from `startStep` on. */
  readonly steps: readonly InstallStep[] | null;
}

export type ConfigParse =
  | { readonly ok: true; readonly config: AgentConfig; readonly ignoredKeys: readonly string[] }
  | { readonly ok: false; readonly problems: readonly string[] };

const KNOWN_KEYS = [
  'apiUrl', 'serviceTls', 'artifactManifestSha256', 'runId', 'token', 'nodeName', 'nodeIp', 'vip', 'labels', 'taints', 'providerId', 'startStep',
  'machineConfigCaCert', 'stateDir', 'requirements', 'timeouts', 'kubeletBootstrapToken', 'purpose', 'steps',
];

/**
 * Checks a parsed config.json and names every problem (field and why),
 * so a bad config ends with one clear message instead of a failure deep
 * inside a step. Unknown keys are reported but allowed, so a newer service
 * can add fields without breaking an older agent.
 */
export function parseAgentConfig(value: unknown): ConfigParse {
  if (!isJsonObject(value)) {
    return { ok: false, problems: ['the config must be a JSON object'] };
  }
  const problems: string[] = [];
  const text = (key: string, check?: (v: string) => string | null): string => {
    const v = value[key];
    if (typeof v !== 'string' || v.length === 0) {
      problems.push(`${key} must be a non-empty string`);
      return '';
    }
    const problem = check?.(v) ?? null;
    if (problem !== null) {
      problems.push(`${key} ${problem}`);
    }
    return v;
  };

  const apiUrl = text('apiUrl', (v) => {
    try {
      const url = new URL(v);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        return `must be an http or https URL (got "${shorten(v)}")`;
      }
      if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
        return `must be a plain base URL without query, fragment or credentials (got "${shorten(v)}")`;
      }
      return null;
    } catch {
      return `is not a URL (got "${shorten(v)}")`;
    }
  }).replace(/\/+$/, '');
  const serviceTls = parseServiceTls(value['serviceTls'], apiUrl, problems);
  const artifactManifestSha256 = text('artifactManifestSha256', (v) => (/^[0-9a-f]{64}$/.test(v) ? null : 'must be 64 lower-case hex digits (a sha256)'));
  const runId = text('runId', (v) => (/^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/.test(v) ? null : `"${shorten(v)}" is not a run id (letters, digits, '-', '_')`));
  const token = text('token', (v) => (/^[\x21-\x7e]{8,4096}$/.test(v) ? null : 'must be 8..4096 printable characters without spaces'));
  const nodeName = text('nodeName', (v) => {
    const problem = checkHostname(v);
    return problem === null ? null : `"${shorten(v)}" ${problem.message}`;
  });
  const nodeIp = text('nodeIp', (v) => checkIp(v)?.message ?? null);
  const vip = text('vip', (v) => checkIp(v)?.message ?? null);
  const startStep = text('startStep', (v) => (isInstallStep(v) ? null : `"${shorten(v)}" is not an install step`)) as InstallStep;
  const stateDir = text('stateDir', (v) =>
    v.startsWith('/') && !v.split('/').includes('..') && v !== '/' && !/[\0\n]/.test(v) ? null : `"${shorten(v)}" must be an absolute path below /`,
  ).replace(/\/+$/, '');

  const labels = parseLabels(value['labels'], problems);
  const taints = parseTaints(value['taints'], problems);
  let providerId: string | null = null;
  const provider = value['providerId'];
  if (typeof provider === 'string' && PROVIDER_ID.test(provider)) {
    providerId = provider;
  } else if (provider !== null && provider !== undefined) {
    problems.push(`providerId must be null or ccos://<cluster>/<node id> (letters, digits, '.', '-', '_'; got "${shorten(String(provider))}")`);
  }

  let machineConfigCaCert: string | null = null;
  const ca = value['machineConfigCaCert'];
  if (typeof ca === 'string' && ca.includes('-----BEGIN CERTIFICATE-----')) {
    machineConfigCaCert = ca;
  } else if (ca !== null && ca !== undefined) {
    problems.push('machineConfigCaCert must be a PEM certificate ("-----BEGIN CERTIFICATE-----") or null');
  }

  let kubeletBootstrapToken: string | null = null;
  const bootstrapToken = value['kubeletBootstrapToken'];
  if (typeof bootstrapToken === 'string' && /^[\x21-\x7e]{16,8192}$/.test(bootstrapToken)) {
    kubeletBootstrapToken = bootstrapToken;
  } else if (bootstrapToken !== null && bootstrapToken !== undefined) {
    // Never echoes the value: it is a credential.
    problems.push('kubeletBootstrapToken must be null or 16..8192 printable characters without spaces');
  }

  const { purpose, steps } = parsePurpose(value, startStep, kubeletBootstrapToken, problems);
  const requirements = parseRequirements(value['requirements'], problems);
  const timeouts = value['timeouts'];
  let nodeReadySeconds = 0;
  if (!isJsonObject(timeouts) || typeof timeouts['nodeReadySeconds'] !== 'number' || !Number.isInteger(timeouts['nodeReadySeconds']) || timeouts['nodeReadySeconds'] <= 0) {
    problems.push('timeouts.nodeReadySeconds must be a positive whole number of seconds');
  } else {
    nodeReadySeconds = timeouts['nodeReadySeconds'];
  }

  if (problems.length > 0) {
    return { ok: false, problems };
  }
  return {
    ok: true,
    config: {
      apiUrl, serviceTls, artifactManifestSha256, runId, token, nodeName, nodeIp, vip, labels, taints, providerId, startStep, machineConfigCaCert, stateDir, requirements,
      timeouts: { nodeReadySeconds },
      kubeletBootstrapToken,
      purpose,
      steps,
    },
    ignoredKeys: Object.keys(value).filter((key) => !KNOWN_KEYS.includes(key)),
  };
}

/** Safe inside the double quotes of kubelet's EnvironmentFile: no spaces, quotes or `$`. */
const PROVIDER_ID = /^ccos:\/\/[A-Za-z0-9._-]{1,253}\/[A-Za-z0-9._-]{1,128}$/;

const PEM_CERTIFICATE = /^-----BEGIN CERTIFICATE-----\r?\n[A-Za-z0-9+/=\r\n]+-----END CERTIFICATE-----/;

/** `serviceTls`: required for an https apiUrl, absent (or null) for http. */
function parseServiceTls(value: unknown, apiUrl: string, problems: string[]): TlsPin | null {
  const https = apiUrl.startsWith('https:');
  if (value === undefined || value === null) {
    if (https) {
      problems.push('serviceTls is required with an https apiUrl: the agent trusts the service only through it');
    }
    return null;
  }
  if (!https) {
    problems.push('serviceTls is set but apiUrl is not https: the service would not be authenticated');
    return null;
  }
  if (!isJsonObject(value)) {
    problems.push('serviceTls must be an object { caCertificates?, verifyHostname?, publicKeySha256? }');
    return null;
  }
  const { caCertificates, verifyHostname, publicKeySha256 } = value;
  if (caCertificates !== undefined && (typeof caCertificates !== 'string' || !PEM_CERTIFICATE.test(caCertificates.trim()))) {
    problems.push('serviceTls.caCertificates must be PEM certificates ("-----BEGIN CERTIFICATE-----")');
  }
  if (verifyHostname !== undefined && typeof verifyHostname !== 'boolean') {
    problems.push('serviceTls.verifyHostname must be true or false');
  }
  const pins = publicKeySha256 === undefined ? [] : publicKeySha256;
  if (!Array.isArray(pins) || !pins.every((pin) => typeof pin === 'string' && /^[A-Za-z0-9+/]{43}=$/.test(pin))) {
    problems.push('serviceTls.publicKeySha256 must be a list of base64 sha256 digests (44 characters)');
  }
  if (caCertificates === undefined && (!Array.isArray(pins) || pins.length === 0)) {
    problems.push('serviceTls needs caCertificates or publicKeySha256: something to recognise the service by');
  }
  return {
    ...(typeof caCertificates === 'string' ? { caCertificates } : {}),
    ...(verifyHostname === true ? { verifyHostname } : {}),
    ...(Array.isArray(pins) && pins.length > 0 ? { publicKeySha256: pins.filter((pin): pin is string => typeof pin === 'string') } : {}),
  };
}

function parseLabels(value: unknown, problems: string[]): Label[] {
  if (value === undefined || value === null) {
    return [];
  }
  if (!Array.isArray(value)) {
    problems.push('labels must be an array of { key, value }');
    return [];
  }
  const labels: Label[] = [];
  value.forEach((entry, index) => {
    if (!isJsonObject(entry) || typeof entry['key'] !== 'string' || typeof entry['value'] !== 'string') {
      problems.push(`labels[${index}] must be { "key": string, "value": string }`);
      return;
    }
    labels.push({ key: entry['key'], value: entry['value'] });
  });
  const problem = checkLabels(labels);
  if (problem !== null) {
    problems.push(`labels: ${problem.message}`);
  }
  return labels;
}

function parseTaints(value: unknown, problems: string[]): Taint[] {
  if (value === undefined || value === null) {
    return [];
  }
  if (!Array.isArray(value)) {
    problems.push('taints must be an array of { key, value, effect }');
    return [];
  }
  const taints: Taint[] = [];
  value.forEach((entry, index) => {
    if (
      !isJsonObject(entry) || typeof entry['key'] !== 'string' || typeof entry['effect'] !== 'string' ||
      !(entry['value'] === null || entry['value'] === undefined || typeof entry['value'] === 'string')
    ) {
      problems.push(`taints[${index}] must be { "key": string, "value": string | null, "effect": string }`);
      return;
    }
    const taintValue = entry['value'];
    taints.push({ key: entry['key'], value: typeof taintValue === 'string' ? taintValue : null, effect: entry['effect'] as TaintEffect });
  });
  const problem = checkTaints(taints);
  if (problem !== null) {
    problems.push(`taints: ${problem.message}`);
  }
  return taints;
}

function parseRequirements(value: unknown, problems: string[]): Requirements {
  const fallback: Requirements = { minKernel: '0', minMemoryBytes: 0, minCpus: 0, maxClockSkewSeconds: 0 };
  if (!isJsonObject(value)) {
    problems.push('requirements must be an object { minKernel, minMemoryBytes, minCpus, maxClockSkewSeconds }');
    return fallback;
  }
  const minKernel = value['minKernel'];
  if (typeof minKernel !== 'string' || !/^\d+(\.\d+){0,3}$/.test(minKernel)) {
    problems.push('requirements.minKernel must be a version such as "4.18"');
  }
  const count = (key: string, positive: boolean): number => {
    const v = value[key];
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || (positive && v === 0) || (key !== 'maxClockSkewSeconds' && !Number.isSafeInteger(v))) {
      problems.push(`requirements.${key} must be a ${positive ? 'positive' : 'non-negative'} ${key === 'maxClockSkewSeconds' ? 'number' : 'whole number'} (got ${JSON.stringify(v) ?? 'nothing'})`);
      return 0;
    }
    return v;
  };
  return {
    minKernel: typeof minKernel === 'string' ? minKernel : '0',
    minMemoryBytes: count('minMemoryBytes', false),
    minCpus: count('minCpus', false),
    maxClockSkewSeconds: count('maxClockSkewSeconds', true),
  };
}

/**
 * The run's purpose and steps: an INSTALL runs every step from `startStep` unless told its steps;
 * an APPLY names them (in install order, from `startStep`, ending with START_KUBELET, never
 * PREFLIGHT) and has no bootstrap token (its node has its own certificates).
 */
function parsePurpose(value: JsonObject, startStep: InstallStep, bootstrapToken: string | null, problems: string[]): Pick<AgentConfig, 'purpose' | 'steps'> {
  const rawPurpose = value['purpose'] ?? 'INSTALL';
  const purpose: InstallRunPurpose = rawPurpose === 'APPLY' ? 'APPLY' : 'INSTALL';
  if (rawPurpose !== 'INSTALL' && rawPurpose !== 'APPLY') {
    problems.push(`purpose must be INSTALL or APPLY (got "${shorten(String(rawPurpose))}")`);
  }
  const raw = value['steps'];
  if (raw === null || raw === undefined) {
    if (purpose === 'APPLY') {
      problems.push('steps must name the steps of an APPLY run');
    }
    return { purpose, steps: null };
  }
  if (!Array.isArray(raw) || raw.length === 0 || !raw.every((step): step is InstallStep => typeof step === 'string' && isInstallStep(step))) {
    problems.push('steps must be null or a non-empty list of install steps');
    return { purpose, steps: null };
  }
  const order = raw.map((step) => INSTALL_STEPS.indexOf(step));
  if (order.some((position, index) => index > 0 && position <= (order[index - 1] ?? -1)) || raw[0] !== startStep) {
    problems.push(`steps must be in install order, each once, starting at startStep (got ${raw.join(', ')})`);
  }
  if (purpose === 'APPLY' && (raw.includes('PREFLIGHT') || raw.at(-1) !== 'START_KUBELET' || bootstrapToken !== null)) {
    problems.push('an APPLY run ends with START_KUBELET, never runs PREFLIGHT and has no kubeletBootstrapToken');
  }
  return { purpose, steps: raw };
}

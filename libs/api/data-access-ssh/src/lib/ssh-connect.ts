import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, connect as tcpConnect } from 'node:net';
import type * as Ssh2Module from 'ssh2';
import type { ConnectConfig, ParsedKey, ServerHostKeyAlgorithm } from 'ssh2';
import { bare, type CodedText, message } from '@ccos/shared/messages';
import { describeHostKey, hostKeyAlgorithmsFor, normalizeFingerprint, type HostKeyInfo, type PinnedHostKey } from './host-key';
import { singleAttemptAuth, type AuthMethodName, type ResolvedCredential } from './single-attempt-auth';
import { classifyConnectFailure, type ConnectFailure, type ConnectPhase, SshError } from './ssh-errors';
import { Ssh2Session, type HostKeyStatus, type SshSession } from './ssh-session';
import { checkSshTarget, describeEndpoint, describeTarget, SSH_PORT, type SshTarget } from './ssh-target';

type Ssh2 = typeof Ssh2Module;

let ssh2Loaded: Promise<Ssh2> | undefined;

/**
 * ssh2, loaded by the first connection: loading it instantiates a WebAssembly module (poly1305)
 * with 16 MiB of memory, which a process that never connects (an API replica) need not hold.
 * It is CommonJS, so its default export is module.exports (Node cannot see `utils` as a named one).
 */
function loadSsh2(): Promise<Ssh2> {
  ssh2Loaded ??= import('ssh2').then((module) => module.default);
  return ssh2Loaded;
}

/** Timeouts and keep-alive of a connection. */
export interface SshConnectOptions {
  /** TCP connect plus the server's SSH banner (default 10 s); running out means `UNREACHABLE`. */
  readonly connectTimeoutMs?: number;
  /** From the banner to a finished login (key exchange, host key, auth; ssh2's `readyTimeout`), default 20 s; running out means `TIMEOUT`. */
  readonly handshakeTimeoutMs?: number;
  /** SSH keep-alive interval after login (default 5 s, 0 disables). */
  readonly keepaliveIntervalMs?: number;
  /** Unanswered keep-alives before the link counts as dead (default 3, so a cut link is noticed in about 15–20 s). */
  readonly keepaliveCountMax?: number;
  /** Progress of the attempt, for logs, audit and tests; never carries a credential. */
  readonly onEvent?: (event: SshConnectEvent) => void;
  /**
   * Which addresses may be connected to (the service's address policy, `ALLOW_CLUSTER_ADDRESSES`):
   * the host, or every address its name resolves to now, is checked before the TCP connection,
   * which then goes to the checked address. Absent: any address.
   */
  readonly addresses?: SshAddressPolicy;
}

/** What {@link SshConnectOptions.addresses} asks: data-access-kube's `ClusterAddressGuard`, the one policy for clusters and hosts. */
export interface SshAddressPolicy {
  check(address: string, purpose: 'ssh'): { readonly ok: true } | { readonly ok: false; readonly reason: string; readonly reasonCoded?: CodedText };
}

/** The code of an {@link SshError} for a target the address policy refuses; no connection was attempted. */
export const SSH_ADDRESS_REFUSED = 'EADDRESSREFUSED';

/** What happened during a connection attempt, in order. */
export type SshConnectEvent =
  | { readonly type: 'tcp-connected'; readonly elapsedMs: number }
  | { readonly type: 'banner'; readonly elapsedMs: number }
  | { readonly type: 'host-key'; readonly hostKey: HostKeyInfo; readonly verdict: HostKeyStatus | 'mismatch'; readonly elapsedMs: number }
  | { readonly type: 'auth-methods'; readonly methods: readonly string[]; readonly elapsedMs: number }
  | { readonly type: 'auth-attempt'; readonly method: AuthMethodName; readonly elapsedMs: number }
  | { readonly type: 'ready'; readonly elapsedMs: number }
  | { readonly type: 'failed'; readonly kind: SshError['kind']; readonly phase: ConnectPhase; readonly elapsedMs: number };

/** Defaults of {@link SshConnectOptions}. */
export const SSH_CONNECT_DEFAULTS = {
  connectTimeoutMs: 10_000,
  handshakeTimeoutMs: 20_000,
  keepaliveIntervalMs: 5_000,
  keepaliveCountMax: 3,
} as const;

type HostKeyMismatch = NonNullable<ConnectFailure['hostKeyMismatch']>;
type AttemptedMethod = NonNullable<ConnectFailure['attemptedMethod']>;

/**
 * What one connection attempt knows, phase by phase (`connect` → `banner` → `handshake` →
 * `auth` → `ready`): the state machine of {@link openSshSession} without its sockets, so each
 * step is testable alone. Every method is one thing the socket or ssh2 reported.
 */
export class ConnectAttempt {
  private currentPhase: ConnectPhase = 'connect';
  private finished = false;
  private offeredKey: HostKeyInfo | null = null;
  private mismatch: HostKeyMismatch | undefined;
  private attemptedMethod: AttemptedMethod | undefined;
  private serverMethods: readonly string[] | undefined;

  constructor(
    /** The pin with its fingerprint normalized, or null to trust on first use. */
    private readonly pinned: PinnedHostKey | null,
    private readonly configuredMethod: 'password' | 'publickey',
  ) {}

  get phase(): ConnectPhase {
    return this.currentPhase;
  }

  /** True once it has failed or logged in: nothing that happens afterwards changes the outcome. */
  get settled(): boolean {
    return this.finished;
  }

  /** The key the server presented, once it has. */
  get hostKey(): HostKeyInfo | null {
    return this.offeredKey;
  }

  /** What the session reports about its key. */
  get hostKeyStatus(): HostKeyStatus {
    return this.pinned === null ? 'first-use' : 'matches-pin';
  }

  /** `connect` → `banner`: TCP is up, the server's banner is awaited. */
  tcpConnected(): void {
    this.currentPhase = 'banner';
  }

  /** `banner` → `handshake`: the server spoke (key exchange, host key and login follow). */
  bannerReceived(): void {
    if (this.currentPhase === 'banner') {
      this.currentPhase = 'handshake';
    }
  }

  /** The host key of the key exchange: accepted when nothing is pinned or it is the pinned one, before any credential is sent. */
  hostKeyOffered(key: HostKeyInfo): { readonly accept: boolean; readonly verdict: HostKeyStatus | 'mismatch' } {
    this.offeredKey = key;
    const pinned = this.pinned;
    if (pinned !== null && key.fingerprint !== pinned.fingerprint) {
      this.mismatch = { expected: pinned.fingerprint, offered: key, ...(pinned.algorithm === undefined ? {} : { pinnedAlgorithm: pinned.algorithm }) };
      return { accept: false, verdict: 'mismatch' };
    }
    return { accept: true, verdict: this.hostKeyStatus };
  }

  methodsOffered(methods: readonly string[]): void {
    this.serverMethods = methods;
  }

  /** → `auth`: a login method is about to be sent (`none` only asks which methods the server takes). */
  authAttempt(method: AuthMethodName): void {
    this.currentPhase = 'auth';
    if (method !== 'none') {
      this.attemptedMethod = method;
    }
  }

  /** An error from ssh2; a server without a key of the pinned type is a changed host key too. */
  clientError(error: Error): void {
    if (this.pinned?.algorithm !== undefined && /no matching host key format/i.test(error.message)) {
      this.mismatch = { expected: this.pinned.fingerprint, offered: null, pinnedAlgorithm: this.pinned.algorithm };
    }
  }

  /** → `ready` when the login finished after a host key was checked; false when it cannot count (already settled, or no key seen). */
  loggedIn(): boolean {
    if (this.finished || this.offeredKey === null) {
      return false;
    }
    this.finished = true;
    this.currentPhase = 'ready';
    return true;
  }

  /** Settles as failed; returns what the failure is classified from, or null when it had already settled. */
  failed(details: { readonly endpoint: string; readonly username: string; readonly error?: unknown; readonly timeoutMs?: number; readonly secrets: readonly string[] }): ConnectFailure | null {
    if (this.finished) {
      return null;
    }
    this.finished = true;
    return {
      endpoint: details.endpoint,
      username: details.username,
      phase: this.currentPhase,
      error: details.error,
      ...(details.timeoutMs === undefined ? {} : { timeoutMs: details.timeoutMs }),
      ...(this.mismatch === undefined ? {} : { hostKeyMismatch: this.mismatch }),
      ...(this.attemptedMethod === undefined ? {} : { attemptedMethod: this.attemptedMethod }),
      ...(this.serverMethods === undefined ? {} : { serverMethods: this.serverMethods }),
      configuredMethod: this.configuredMethod,
      secrets: details.secrets,
    };
  }
}

/**
 * Connects and logs in, with one authentication attempt. The host key is
 * checked during key exchange, before any credential leaves this process:
 * with `target.hostKey` pinned, a different key ends the attempt with
 * `HOST_KEY_CHANGED`; without a pin the key is accepted and reported on the
 * session (`hostKeyStatus: 'first-use'`) for the caller to store.
 *
 * Rejects with an {@link SshError} (`UNREACHABLE`, `TIMEOUT`, `AUTH_FAILED`,
 * `HOST_KEY_CHANGED`, `PROTOCOL`, `OTHER`); with a `RangeError` for a target
 * that fails {@link checkSshTarget}.
 */
export async function openSshSession(target: SshTarget, options: SshConnectOptions = {}): Promise<SshSession> {
  const problem = checkSshTarget(target);
  if (problem !== null) {
    throw new RangeError(`invalid SSH target ${describeTarget(target)}: ${problem}`);
  }
  const ssh2 = await loadSsh2();
  const settings = { ...SSH_CONNECT_DEFAULTS, ...definedOnly(options) };
  const endpoint = describeEndpoint(target);
  const secrets = secretsOf(target);
  const started = Date.now();
  const emit = (event: DistributiveOmit<SshConnectEvent, 'elapsedMs'>) => {
    options.onEvent?.({ ...event, elapsedMs: Date.now() - started } as SshConnectEvent);
  };
  const configuredMethod = target.auth.kind === 'password' ? 'password' : 'publickey';

  const credential = resolveCredential(target, ssh2);
  if (credential instanceof Error) {
    const error = classifyConnectFailure({ endpoint, username: target.username, phase: 'connect', error: credential, configuredMethod, secrets });
    emit({ type: 'failed', kind: error.kind, phase: 'connect' });
    throw error;
  }
  const pinned = target.hostKey == null
    ? null
    : { fingerprint: normalizeFingerprint(target.hostKey.fingerprint) ?? '', algorithm: target.hostKey.algorithm };

  const policy = options.addresses;
  const checked = policy === undefined
    ? Promise.resolve(target.host)
    : addressToConnect(target.host, policy, endpoint).catch((error: unknown) => {
      const sshError = error instanceof SshError ? error : classifyConnectFailure({ endpoint, username: target.username, phase: 'connect', error, configuredMethod, secrets });
      emit({ type: 'failed', kind: sshError.kind, phase: 'connect' });
      throw sshError;
    });

  return checked.then((address) => new Promise<SshSession>((resolve, reject) => {
    const attempt = new ConnectAttempt(pinned, configuredMethod);
    let handshakeTimer: NodeJS.Timeout | undefined;
    const client = new ssh2.Client();
    const socket = tcpConnect({ host: address, port: target.port ?? SSH_PORT });
    socket.setNoDelay(true);

    const fail = (error: unknown, timeoutMs?: number) => {
      const failure = attempt.failed({ endpoint, username: target.username, error, secrets, ...(timeoutMs === undefined ? {} : { timeoutMs }) });
      if (failure === null) {
        return;
      }
      clearTimeout(connectTimer);
      clearTimeout(handshakeTimer);
      const sshError = classifyConnectFailure(failure);
      emit({ type: 'failed', kind: sshError.kind, phase: failure.phase });
      client.destroy();
      socket.destroy();
      reject(sshError);
    };

    const connectTimer = setTimeout(() => fail(undefined, settings.connectTimeoutMs), settings.connectTimeoutMs);
    socket.once('connect', () => {
      attempt.tcpConnected();
      emit({ type: 'tcp-connected' });
    });

    const config: ConnectConfig = {
      sock: socket,
      username: target.username,
      authHandler: singleAttemptAuth(target.username, credential, {
        methodsOffered: (methods) => {
          attempt.methodsOffered(methods);
          emit({ type: 'auth-methods', methods });
        },
        attempt: (method) => {
          attempt.authAttempt(method);
          emit({ type: 'auth-attempt', method });
        },
      }),
      hostVerifier: (key: Buffer) => {
        const hostKey = describeHostKey(key);
        const { accept, verdict } = attempt.hostKeyOffered(hostKey);
        emit({ type: 'host-key', hostKey, verdict });
        return accept;
      },
      keepaliveInterval: settings.keepaliveIntervalMs,
      keepaliveCountMax: settings.keepaliveCountMax,
      // Our own timers classify by phase; ssh2's is only a backstop.
      readyTimeout: settings.connectTimeoutMs + settings.handshakeTimeoutMs + 1_000,
      ...(pinned?.algorithm === undefined
        ? {}
        : { algorithms: { serverHostKey: hostKeyAlgorithmsFor(pinned.algorithm) as ServerHostKeyAlgorithm[] } }),
    };

    client.on('error', (error: Error) => {
      attempt.clientError(error);
      fail(error);
    });
    client.on('close', () => fail(undefined));
    client.on('ready', () => {
      const hostKey = attempt.hostKey;
      if (hostKey === null || !attempt.loggedIn()) {
        return;
      }
      clearTimeout(connectTimer);
      clearTimeout(handshakeTimer);
      emit({ type: 'ready' });
      resolve(new Ssh2Session(client, {
        target: describeTarget(target),
        endpoint,
        hostKey,
        hostKeyStatus: attempt.hostKeyStatus,
        sudo: target.sudo === true,
        keepaliveIntervalMs: settings.keepaliveIntervalMs,
        keepaliveCountMax: settings.keepaliveCountMax,
      }));
    });
    client.connect(config);
    // ssh2 has paused the socket; this listener only sees data once ssh2 reads it.
    socket.once('data', () => {
      attempt.bannerReceived();
      clearTimeout(connectTimer);
      emit({ type: 'banner' });
      if (!attempt.settled) {
        handshakeTimer = setTimeout(() => fail(undefined, settings.handshakeTimeoutMs), settings.handshakeTimeoutMs);
      }
    });
  }));
}

/**
 * The address to connect to: the host itself, or the first address its name resolves to, once
 * every one of them passed the policy (one refused address refuses the name, so a name cannot
 * take turns between a host and the metadata service). Rejects with an `UNREACHABLE`
 * {@link SshError} coded {@link SSH_ADDRESS_REFUSED}, or with the lookup's error.
 */
async function addressToConnect(host: string, policy: SshAddressPolicy, endpoint: string): Promise<string> {
  const addresses = isIP(host) !== 0
    ? [host]
    : await new Promise<string[]>((resolve, reject) =>
      dnsLookup(host, { all: true }, (error, found: LookupAddress[]) => (error ? reject(error) : resolve(found.map((entry) => entry.address)))),
    );
  for (const address of addresses) {
    const verdict = policy.check(address, 'ssh');
    if (!verdict.ok) {
      const refusal = verdict.reasonCoded ?? verdict.reason;
      const text = address === host ? refusal : typeof refusal === 'string' ? `${host} resolves to ${refusal}` : message('ssh.resolvesTo', { host, refusal: bare(refusal) });
      throw new SshError(text, { kind: 'UNREACHABLE', endpoint, code: SSH_ADDRESS_REFUSED, phase: 'connect' });
    }
  }
  const [first] = addresses;
  if (first === undefined) {
    throw Object.assign(new Error(`${host} has no address`), { code: 'ENOTFOUND' });
  }
  return first;
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

function resolveCredential(target: SshTarget, ssh2: Ssh2): ResolvedCredential | Error {
  if (target.auth.kind === 'password') {
    return { kind: 'password', password: target.auth.password };
  }
  const parsed = ssh2.utils.parseKey(target.auth.privateKey, target.auth.passphrase);
  const key: ParsedKey | Error | undefined = Array.isArray(parsed) ? (parsed as ParsedKey[])[0] : parsed;
  if (key === undefined || key instanceof Error) {
    // ssh2's parse messages are fixed texts, but we word our own so nothing of the key can leak.
    const message = key?.message ?? '';
    const reason = /no passphrase given/i.test(message)
      ? 'it is encrypted and no passphrase was given'
      : /passphrase|integrity check|decrypt/i.test(message)
        ? 'the passphrase is wrong'
        : 'it is not a private key in a supported format (OpenSSH or PEM)';
    return Object.assign(new Error(reason), { code: 'INVALID_KEY' });
  }
  if (!key.isPrivateKey()) {
    return Object.assign(new Error('it is a public key, not a private key'), { code: 'INVALID_KEY' });
  }
  return { kind: 'privateKey', key };
}

/** Strings that must never show in an error: the password, the passphrase, every line of the key. */
function secretsOf(target: SshTarget): string[] {
  if (target.auth.kind === 'password') {
    return [target.auth.password];
  }
  const keyText = typeof target.auth.privateKey === 'string' ? target.auth.privateKey : target.auth.privateKey.toString('utf8');
  const lines = keyText.split(/\r?\n/).map((line) => line.trim()).filter((line) => line.length >= 16 && !line.startsWith('-----'));
  return [...(target.auth.passphrase === undefined ? [] : [target.auth.passphrase]), ...lines];
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as Partial<T>;
}

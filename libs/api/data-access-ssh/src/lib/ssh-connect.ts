import { connect as tcpConnect } from 'node:net';
// ssh2 is CommonJS and Node cannot see `utils` as a named export; the default import is module.exports.
import ssh2, { Client, type ConnectConfig, type ParsedKey, type ServerHostKeyAlgorithm } from 'ssh2';
import { describeHostKey, hostKeyAlgorithmsFor, normalizeFingerprint, type HostKeyInfo } from './host-key';
import { singleAttemptAuth, type AuthMethodName, type ResolvedCredential } from './single-attempt-auth';
import { classifyConnectFailure, type ConnectPhase, type SshError } from './ssh-errors';
import { Ssh2Session, type HostKeyStatus, type SshSession } from './ssh-session';
import { checkSshTarget, describeEndpoint, describeTarget, SSH_PORT, type SshTarget } from './ssh-target';

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
}

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
export function openSshSession(target: SshTarget, options: SshConnectOptions = {}): Promise<SshSession> {
  const problem = checkSshTarget(target);
  if (problem !== null) {
    return Promise.reject(new RangeError(`invalid SSH target ${describeTarget(target)}: ${problem}`));
  }
  const settings = { ...SSH_CONNECT_DEFAULTS, ...definedOnly(options) };
  const endpoint = describeEndpoint(target);
  const secrets = secretsOf(target);
  const started = Date.now();
  const emit = (event: DistributiveOmit<SshConnectEvent, 'elapsedMs'>) => {
    options.onEvent?.({ ...event, elapsedMs: Date.now() - started } as SshConnectEvent);
  };
  const configuredMethod = target.auth.kind === 'password' ? 'password' : 'publickey';

  const credential = resolveCredential(target);
  if (credential instanceof Error) {
    const error = classifyConnectFailure({ endpoint, username: target.username, phase: 'connect', error: credential, configuredMethod, secrets });
    emit({ type: 'failed', kind: error.kind, phase: 'connect' });
    return Promise.reject(error);
  }
  const pinned = target.hostKey == null
    ? null
    : { fingerprint: normalizeFingerprint(target.hostKey.fingerprint) ?? '', algorithm: target.hostKey.algorithm };

  return new Promise<SshSession>((resolve, reject) => {
    let phase: ConnectPhase = 'connect';
    let settled = false;
    let hostKey: HostKeyInfo | null = null;
    let hostKeyMismatch: { expected: string; offered: HostKeyInfo | null; pinnedAlgorithm?: string } | undefined;
    let attemptedMethod: 'password' | 'publickey' | 'keyboard-interactive' | undefined;
    let serverMethods: readonly string[] | undefined;
    let handshakeTimer: NodeJS.Timeout | undefined;
    const client = new Client();
    const socket = tcpConnect({ host: target.host, port: target.port ?? SSH_PORT });
    socket.setNoDelay(true);

    const fail = (error: unknown, timeoutMs?: number) => {
      if (settled) {
        return;
      }
      settled = true;
      clearTimeout(connectTimer);
      clearTimeout(handshakeTimer);
      const offeredOnMismatch = hostKeyMismatch;
      const sshError = classifyConnectFailure({
        endpoint,
        username: target.username,
        phase,
        error,
        ...(timeoutMs === undefined ? {} : { timeoutMs }),
        ...(offeredOnMismatch === undefined ? {} : { hostKeyMismatch: offeredOnMismatch }),
        ...(attemptedMethod === undefined ? {} : { attemptedMethod }),
        ...(serverMethods === undefined ? {} : { serverMethods }),
        configuredMethod,
        secrets,
      });
      emit({ type: 'failed', kind: sshError.kind, phase });
      client.destroy();
      socket.destroy();
      reject(sshError);
    };

    const connectTimer = setTimeout(() => fail(undefined, settings.connectTimeoutMs), settings.connectTimeoutMs);
    socket.once('connect', () => {
      phase = 'banner';
      emit({ type: 'tcp-connected' });
    });

    const config: ConnectConfig = {
      sock: socket,
      username: target.username,
      authHandler: singleAttemptAuth(target.username, credential, {
        methodsOffered: (methods) => {
          serverMethods = methods;
          emit({ type: 'auth-methods', methods });
        },
        attempt: (method) => {
          phase = 'auth';
          if (method !== 'none') {
            attemptedMethod = method;
          }
          emit({ type: 'auth-attempt', method });
        },
      }),
      hostVerifier: (key: Buffer) => {
        hostKey = describeHostKey(key);
        if (pinned !== null && hostKey.fingerprint !== pinned.fingerprint) {
          hostKeyMismatch = { expected: pinned.fingerprint, offered: hostKey, ...(pinned.algorithm === undefined ? {} : { pinnedAlgorithm: pinned.algorithm }) };
          emit({ type: 'host-key', hostKey, verdict: 'mismatch' });
          return false;
        }
        emit({ type: 'host-key', hostKey, verdict: pinned === null ? 'first-use' : 'matches-pin' });
        return true;
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
      if (pinned?.algorithm !== undefined && /no matching host key format/i.test(error.message)) {
        hostKeyMismatch = { expected: pinned.fingerprint, offered: null, pinnedAlgorithm: pinned.algorithm };
      }
      fail(error);
    });
    client.on('close', () => fail(undefined));
    client.on('ready', () => {
      if (settled || hostKey === null) {
        return;
      }
      settled = true;
      clearTimeout(connectTimer);
      clearTimeout(handshakeTimer);
      phase = 'ready';
      emit({ type: 'ready' });
      resolve(new Ssh2Session(client, {
        target: describeTarget(target),
        endpoint,
        hostKey,
        hostKeyStatus: pinned === null ? 'first-use' : 'matches-pin',
        sudo: target.sudo === true,
        keepaliveIntervalMs: settings.keepaliveIntervalMs,
        keepaliveCountMax: settings.keepaliveCountMax,
      }));
    });
    client.connect(config);
    // ssh2 has paused the socket; this listener only sees data once ssh2 reads it.
    socket.once('data', () => {
      if (phase === 'banner') {
        phase = 'handshake';
      }
      clearTimeout(connectTimer);
      emit({ type: 'banner' });
      if (!settled) {
        handshakeTimer = setTimeout(() => fail(undefined, settings.handshakeTimeoutMs), settings.handshakeTimeoutMs);
      }
    });
  });
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

function resolveCredential(target: SshTarget): ResolvedCredential | Error {
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

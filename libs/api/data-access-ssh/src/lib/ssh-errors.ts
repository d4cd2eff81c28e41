import { bare, type CodedText, message } from '@ccos/shared/messages';
import type { HostKeyInfo } from './host-key';

/**
 * Stable failure kinds. The first four map one to one onto the node states
 * `AUTH_FAILED`, `UNREACHABLE`, `HOST_KEY_CHANGED` and (for `TIMEOUT` and
 * `CONNECTION_LOST`) `UNREACHABLE`; the rest end an operation on a host that
 * was reached.
 */
export const SSH_ERROR_KINDS = [
  'AUTH_FAILED',
  'UNREACHABLE',
  'TIMEOUT',
  'HOST_KEY_CHANGED',
  'CONNECTION_LOST',
  'CHECKSUM_MISMATCH',
  'REMOTE_FAILED',
  'PROTOCOL',
  'OTHER',
] as const;

/** One of {@link SSH_ERROR_KINDS}. */
export type SshErrorKind = (typeof SSH_ERROR_KINDS)[number];

/** How far a connection got before it failed. */
export type ConnectPhase = 'connect' | 'banner' | 'handshake' | 'auth' | 'ready';

/** Fields of an {@link SshError} besides its message. */
export interface SshErrorFields {
  readonly kind: SshErrorKind;
  /** `host:port` of the server. */
  readonly endpoint: string;
  /** The underlying code, e.g. `ECONNREFUSED`, `KEEPALIVE`, `INVALID_KEY`. */
  readonly code?: string;
  readonly phase?: ConnectPhase;
  readonly expectedFingerprint?: string;
  /** What the server offered; null when it offered no key of the pinned type. */
  readonly offeredFingerprint?: string | null;
  readonly offeredAlgorithm?: string;
  readonly expectedSha256?: string;
  readonly actualSha256?: string;
}

/**
 * A failed SSH operation with a stable {@link SshErrorKind} and a message for
 * people that names the host and a next step. It never holds a password,
 * key, passphrase or ssh2 debug output: the cause is reduced to its message
 * and code, and `toJSON` lists only the fields above.
 */
export class SshError extends Error {
  readonly kind: SshErrorKind;
  readonly endpoint: string;
  readonly code?: string;
  readonly phase?: ConnectPhase;
  readonly expectedFingerprint?: string;
  readonly offeredFingerprint?: string | null;
  readonly offeredAlgorithm?: string;
  readonly expectedSha256?: string;
  readonly actualSha256?: string;
  /**
   * The message by its code, for failures that reach a person as a node's reason (connecting,
   * logging in, a lost connection); null for the rest, whose text stays in logs and run details.
   */
  readonly coded: CodedText | null;

  constructor(text: string | CodedText, fields: SshErrorFields, cause?: unknown) {
    super(typeof text === 'string' ? text : text.message, cause === undefined ? undefined : { cause: reducedCause(cause) });
    this.coded = typeof text === 'string' ? null : text;
    this.name = 'SshError';
    this.kind = fields.kind;
    this.endpoint = fields.endpoint;
    this.code = fields.code;
    this.phase = fields.phase;
    this.expectedFingerprint = fields.expectedFingerprint;
    this.offeredFingerprint = fields.offeredFingerprint;
    this.offeredAlgorithm = fields.offeredAlgorithm;
    this.expectedSha256 = fields.expectedSha256;
    this.actualSha256 = fields.actualSha256;
  }

  /** The fields worth logging or returning, and nothing else. */
  toJSON(): SshErrorFields & { readonly name: string; readonly message: string } {
    const fields = {
      name: this.name, kind: this.kind, message: this.message, endpoint: this.endpoint, code: this.code, phase: this.phase,
      expectedFingerprint: this.expectedFingerprint, offeredFingerprint: this.offeredFingerprint, offeredAlgorithm: this.offeredAlgorithm,
      expectedSha256: this.expectedSha256, actualSha256: this.actualSha256,
    };
    return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as typeof fields;
  }
}

/** True for an {@link SshError}, optionally of one of the given kinds. */
export function isSshError(value: unknown, ...kinds: SshErrorKind[]): value is SshError {
  return value instanceof SshError && (kinds.length === 0 || kinds.includes(value.kind));
}

/** The parts of an ssh2 or socket error we look at. */
export interface RawError {
  readonly message: string;
  readonly code?: string;
  readonly level?: string;
}

/** Reads message, code and ssh2's `level` off anything thrown. */
export function readRawError(error: unknown): RawError {
  if (error instanceof Error || (typeof error === 'object' && error !== null)) {
    const record = error as { message?: unknown; code?: unknown; level?: unknown };
    return {
      message: typeof record.message === 'string' ? record.message : String(error),
      ...(typeof record.code === 'string' || typeof record.code === 'number' ? { code: String(record.code) } : {}),
      ...(typeof record.level === 'string' ? { level: record.level } : {}),
    };
  }
  return { message: String(error) };
}

/** What the connection attempt knew when it failed; input of {@link classifyConnectFailure}. */
export interface ConnectFailure {
  /** `host:port`. */
  readonly endpoint: string;
  readonly username: string;
  readonly phase: ConnectPhase;
  /** The first error ssh2 or the socket reported, if any. */
  readonly error?: unknown;
  /** Set when our own connect or handshake timer fired, with its length. */
  readonly timeoutMs?: number;
  /** Set when a pinned host key was refused. */
  readonly hostKeyMismatch?: { readonly expected: string; readonly offered: HostKeyInfo | null; readonly pinnedAlgorithm?: string };
  /** The credential we sent (at most one), if any. */
  readonly attemptedMethod?: 'password' | 'publickey' | 'keyboard-interactive';
  /** The method the target is configured for. */
  readonly configuredMethod: 'password' | 'publickey';
  /** Methods the server said it accepts, once known. */
  readonly serverMethods?: readonly string[];
  /** Strings that must never appear in a message (password, passphrase, key). */
  readonly secrets?: readonly string[];
}

/** Socket codes that mean the host could not be reached (their words are the catalogue's `ssh.unreachable`). */
const UNREACHABLE_CODES: ReadonlySet<string> = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'EHOSTDOWN', 'ENETUNREACH', 'ETIMEDOUT', 'EADDRNOTAVAIL']);

const NAME_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME']);

/**
 * Turns how a connection attempt ended into an {@link SshError}. Pure, so
 * every branch is covered by table tests.
 *
 * - before the SSH banner (refused, no route, silence, reset) → `UNREACHABLE`
 * - banner seen, but key exchange or login did not finish in time → `TIMEOUT`
 * - pinned host key differs → `HOST_KEY_CHANGED`
 * - the one login attempt was rejected, or the server does not offer our
 *   method → `AUTH_FAILED`
 * - algorithm or protocol trouble → `PROTOCOL`; anything else → `OTHER`
 */
export function classifyConnectFailure(failure: ConnectFailure): SshError {
  const { endpoint, phase } = failure;
  const raw = failure.error === undefined ? undefined : readRawError(failure.error);
  const port = endpoint.slice(endpoint.lastIndexOf(':') + 1);
  const seconds = failure.timeoutMs === undefined ? '' : formatSeconds(failure.timeoutMs);
  const detail = raw === undefined ? '' : redact(raw.message, failure.secrets ?? []);
  const make = (kind: SshErrorKind, text: CodedText, extra: Partial<SshErrorFields> = {}) =>
    new SshError(text, { kind, endpoint, phase, ...(raw?.code === undefined ? {} : { code: raw.code }), ...extra }, raw === undefined ? undefined : { ...raw, message: detail });

  if (failure.hostKeyMismatch !== undefined) {
    const { expected, offered, pinnedAlgorithm } = failure.hostKeyMismatch;
    const keyFile = hostKeyFile(offered?.algorithm ?? pinnedAlgorithm);
    const what = offered === null
      ? (pinnedAlgorithm === undefined ? message('ssh.hostKeyNoneOfType', { expected }) : message('ssh.hostKeyNoneOfTypeNamed', { expected, algorithm: pinnedAlgorithm }))
      : message('ssh.hostKeyOffered', { expected, offered: offered.fingerprint, algorithm: offered.algorithm });
    return make('HOST_KEY_CHANGED', message('ssh.hostKeyChanged', { endpoint, what: bare(what), keyFile }),
      { expectedFingerprint: expected, offeredFingerprint: offered?.fingerprint ?? null, ...(offered === null ? {} : { offeredAlgorithm: offered.algorithm }) });
  }

  if (failure.timeoutMs !== undefined) {
    if (phase === 'connect') {
      return make('UNREACHABLE', message('ssh.connectTimeout', { endpoint, seconds, port }), { code: 'CONNECT_TIMEOUT' });
    }
    if (phase === 'banner') {
      return make('UNREACHABLE', message('ssh.bannerTimeout', { endpoint, seconds, port }), { code: 'BANNER_TIMEOUT' });
    }
    return make('TIMEOUT', message('ssh.handshakeTimeout', { endpoint, seconds, during: phase === 'auth' ? 'auth' : 'kex' }), { code: 'HANDSHAKE_TIMEOUT' });
  }

  if (raw?.code === 'INVALID_KEY') {
    return make('AUTH_FAILED', message('ssh.invalidKey', { user: failure.username, endpoint, detail }));
  }

  if (raw !== undefined && raw.code !== undefined && UNREACHABLE_CODES.has(raw.code) && (phase === 'connect' || phase === 'banner')) {
    return make('UNREACHABLE', message('ssh.unreachable', { endpoint, code: raw.code, port }));
  }
  if (raw?.code !== undefined && NAME_CODES.has(raw.code)) {
    return make('UNREACHABLE', message('ssh.unresolvable', { endpoint, code: raw.code }));
  }
  if (phase === 'connect' || phase === 'banner') {
    return make('UNREACHABLE', detail === '' ? message('ssh.closedBeforeBanner', { endpoint }) : message('ssh.closedBeforeBannerDetail', { endpoint, detail }));
  }

  if (raw?.level === 'client-authentication' || (phase === 'auth' && failure.attemptedMethod !== undefined)) {
    return make('AUTH_FAILED', authFailedMessage(failure));
  }
  if (phase === 'auth' && failure.serverMethods !== undefined) {
    return make('AUTH_FAILED', authFailedMessage(failure));
  }

  if (raw?.level === 'handshake' || raw?.level === 'protocol' || /handshake|algorithm|protocol|MAC|cipher/i.test(detail)) {
    return make('PROTOCOL', message('ssh.handshakeFailed', { endpoint, detail: detail === '' ? bare(message('ssh.connectionClosed')) : detail }));
  }
  if (raw === undefined || raw.code === 'ECONNRESET' || raw.code === 'EPIPE') {
    return make('PROTOCOL', message('ssh.closedDuring', { endpoint, during: phase === 'auth' ? 'auth' : 'kex', code: raw === undefined ? 'none' : String(raw.code) }));
  }
  return make('OTHER', message('ssh.failed', { user: failure.username, endpoint, detail }));
}

function authFailedMessage(failure: ConnectFailure): CodedText {
  const { endpoint, username: user, configuredMethod, attemptedMethod, serverMethods } = failure;
  const offered = serverMethods === undefined ? '' : bare(serverMethods.length === 0 ? message('ssh.offersNothing') : message('ssh.offers', { methods: serverMethods.join(', ') }));
  if (attemptedMethod === undefined) {
    return message(configuredMethod === 'password' ? 'ssh.authNoPassword' : 'ssh.authNoPubkey', { user, endpoint, offered });
  }
  return message(attemptedMethod === 'publickey' ? 'ssh.authKeyRejected' : 'ssh.authPasswordRejected', { user, endpoint });
}

/** Builds the error for a connection that dropped after login (keep-alive unanswered, server closed, socket error). */
export function connectionLost(endpoint: string, reason: string, cause?: unknown): SshError {
  return new SshError(
    message('ssh.connectionLost', { endpoint, reason }),
    { kind: 'CONNECTION_LOST', endpoint, phase: 'ready', code: cause === undefined ? 'CLOSED' : readRawError(cause).code ?? 'CLOSED' },
    cause,
  );
}

/** Builds the error for a remote step that failed on a reachable host (SFTP status, a command's exit code). */
export function remoteFailed(endpoint: string, what: string, detail: string, cause?: unknown): SshError {
  return new SshError(`${what} on ${endpoint} failed: ${detail}`, { kind: 'REMOTE_FAILED', endpoint, phase: 'ready' }, cause);
}

/** Builds the error for a remote file whose SHA-256 is not the expected one. */
export function checksumMismatch(endpoint: string, path: string, expectedSha256: string, actualSha256: string): SshError {
  return new SshError(
    `The copy of ${path} on ${endpoint} has SHA-256 ${actualSha256}, expected ${expectedSha256}. ` +
    'It is corrupt or was changed; upload it again (check free disk space on the host if it happens twice).',
    { kind: 'CHECKSUM_MISMATCH', endpoint, phase: 'ready', expectedSha256, actualSha256 },
  );
}

/** Replaces every occurrence of a secret (of 4+ characters) with `[redacted]`. */
export function redact(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const secret of secrets) {
    if (secret.length >= 4) {
      result = result.split(secret).join('[redacted]');
    }
  }
  return result;
}

function reducedCause(cause: unknown): Error {
  const raw = readRawError(cause);
  const reduced = new Error(raw.message);
  if (raw.code !== undefined) {
    Object.defineProperty(reduced, 'code', { value: raw.code, enumerable: true });
  }
  if (raw.level !== undefined) {
    Object.defineProperty(reduced, 'level', { value: raw.level, enumerable: true });
  }
  return reduced;
}

function formatSeconds(ms: number): string {
  const seconds = ms / 1000;
  return `${Number.isInteger(seconds) ? seconds : seconds.toFixed(1)} s`;
}

function hostKeyFile(algorithm: string | undefined): string {
  if (algorithm?.startsWith('ecdsa') === true) {
    return '/etc/ssh/ssh_host_ecdsa_key.pub';
  }
  if (algorithm === 'ssh-rsa' || algorithm?.startsWith('rsa') === true) {
    return '/etc/ssh/ssh_host_rsa_key.pub';
  }
  return '/etc/ssh/ssh_host_ed25519_key.pub';
}

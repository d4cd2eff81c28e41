import type { Client, SFTPWrapper } from 'ssh2';
import type { HostKeyInfo } from './host-key';
import { runRemoteCommand, type ExecOptions, type ExecResult } from './remote-exec';
import { defineScript, scriptArgv, type RemoteScript } from './remote-script';
import { connectionLost, readRawError, remoteFailed, type SshError } from './ssh-errors';

/** Whether the host key was checked against a pin or seen for the first time. */
export type HostKeyStatus = 'matches-pin' | 'first-use';

/** A logged-in SSH connection to one host. */
export interface SshSession {
  /** `user@host:port`. */
  readonly target: string;
  /** `host:port`. */
  readonly endpoint: string;
  /** The server's host key; on `first-use`, store it and pass it as `hostKey` next time. */
  readonly hostKey: HostKeyInfo;
  readonly hostKeyStatus: HostKeyStatus;
  /** Whether commands run through `sudo -n` by default (from the target). */
  readonly sudo: boolean;
  /** True once closed by us or lost. */
  readonly closed: boolean;
  /** Why the connection ended, when it was lost rather than closed by us. */
  readonly lostReason: SshError | null;
  /**
   * Runs `argv` as one command: every element single-quoted, so nothing in
   * it is interpreted by the remote shell. There is no variant that takes a
   * command string.
   */
  exec(argv: readonly string[], options?: ExecOptions): Promise<ExecResult>;
  /** Runs a code-owned script with `args` as its quoted positional parameters. */
  runScript(script: RemoteScript, args?: readonly string[], options?: ExecOptions): Promise<ExecResult>;
  /** The session's SFTP channel (opened once, on first use). */
  sftp(): Promise<SFTPWrapper>;
  /** Ends the connection cleanly (SSH disconnect, then TCP close); safe to call twice. */
  close(): Promise<void>;
}

/** What {@link Ssh2Session} is built from once login succeeded. */
export interface SessionInit {
  readonly target: string;
  readonly endpoint: string;
  readonly hostKey: HostKeyInfo;
  readonly hostKeyStatus: HostKeyStatus;
  readonly sudo: boolean;
  /** Keep-alive settings, to say how long the link was silent when it is lost. */
  readonly keepaliveIntervalMs: number;
  readonly keepaliveCountMax: number;
}

const KILL_GROUP = defineScript('kill-group', [
  'kill -s TERM -- "-$1" 2>/dev/null || exit 0',
  'i=0',
  'while [ "$i" -lt 20 ] && kill -0 -- "-$1" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done',
  'kill -s KILL -- "-$1" 2>/dev/null',
  'exit 0',
].join('\n'));

/** How long closing waits for the server's side before dropping the socket. */
const CLOSE_WAIT_MS = 2_000;

/** {@link SshSession} over an ssh2 {@link Client}. The client is private: it holds the credentials. */
export class Ssh2Session implements SshSession {
  readonly target: string;
  readonly endpoint: string;
  readonly hostKey: HostKeyInfo;
  readonly hostKeyStatus: HostKeyStatus;
  readonly sudo: boolean;
  readonly #client: Client;
  #sftp: Promise<SFTPWrapper> | null = null;
  #closing = false;
  #ended = false;
  #lost: SshError | null = null;
  readonly #lostListeners = new Set<(error: SshError) => void>();
  readonly #endedWaiters: (() => void)[] = [];

  constructor(client: Client, init: SessionInit) {
    this.#client = client;
    this.target = init.target;
    this.endpoint = init.endpoint;
    this.hostKey = init.hostKey;
    this.hostKeyStatus = init.hostKeyStatus;
    this.sudo = init.sudo;
    client.on('error', (error: Error) => {
      const raw = readRawError(error);
      const reason = raw.message === 'Keepalive timeout'
        ? `no answer to ${init.keepaliveCountMax} keep-alives sent ${init.keepaliveIntervalMs / 1000} s apart`
        : raw.message;
      this.#markLost(connectionLost(this.endpoint, reason, { ...raw, code: raw.message === 'Keepalive timeout' ? 'KEEPALIVE' : raw.code }));
    });
    client.on('close', () => {
      if (!this.#closing) {
        this.#markLost(connectionLost(this.endpoint, 'closed by the server or the network'));
      }
      this.#ended = true;
      for (const waiter of this.#endedWaiters.splice(0)) {
        waiter();
      }
    });
  }

  get closed(): boolean {
    return this.#closing || this.#ended || this.#lost !== null;
  }

  get lostReason(): SshError | null {
    return this.#lost;
  }

  exec(argv: readonly string[], options: ExecOptions = {}): Promise<ExecResult> {
    return runRemoteCommand({
      client: this.#client,
      endpoint: this.endpoint,
      lost: () => this.#lost ?? (this.#closing ? connectionLost(this.endpoint, 'the session was closed') : null),
      onLost: (listener) => {
        this.#lostListeners.add(listener);
        return () => this.#lostListeners.delete(listener);
      },
      killProcessGroup: async (pid, sudo) => {
        await this.exec(scriptArgv(KILL_GROUP, [String(pid)]), { sudo, timeoutMs: 10_000 });
      },
    }, argv, { ...options, sudo: options.sudo ?? this.sudo });
  }

  runScript(script: RemoteScript, args: readonly string[] = [], options: ExecOptions = {}): Promise<ExecResult> {
    return this.exec(scriptArgv(script, args), options);
  }

  sftp(): Promise<SFTPWrapper> {
    if (this.#lost !== null) {
      return Promise.reject(this.#lost);
    }
    this.#sftp ??= new Promise<SFTPWrapper>((resolve, reject) => {
      try {
        this.#client.sftp((error, sftp) => {
          if (error) {
            this.#sftp = null;
            reject(this.#lost ?? remoteFailed(this.endpoint, 'Starting SFTP',
              `${readRawError(error).message}. Check that sshd_config has a working "Subsystem sftp" line.`, error));
            return;
          }
          sftp.on('error', () => undefined);
          resolve(sftp);
        });
      } catch (error) {
        this.#sftp = null;
        reject(this.#lost ?? connectionLost(this.endpoint, 'not connected', error));
      }
    });
    return this.#sftp;
  }

  async close(): Promise<void> {
    if (this.#ended) {
      return;
    }
    const ended = new Promise<void>((resolve) => this.#endedWaiters.push(resolve));
    if (!this.#closing) {
      this.#closing = true;
      this.#client.end();
    }
    const timer = setTimeout(() => this.#client.destroy(), CLOSE_WAIT_MS);
    await ended;
    clearTimeout(timer);
  }

  #markLost(error: SshError): void {
    if (this.#lost !== null || this.#closing) {
      return;
    }
    this.#lost = error;
    for (const listener of [...this.#lostListeners]) {
      listener(error);
    }
    this.#client.destroy();
  }
}

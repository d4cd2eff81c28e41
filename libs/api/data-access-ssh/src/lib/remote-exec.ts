import type { Readable } from 'node:stream';
import type { Client, ClientChannel } from 'ssh2';
import { OutputTail } from './output-tail';
import { buildRemoteCommand, displayCommand, takePidLine, type RemoteCommandOptions } from './remote-command';
import { connectionLost, readRawError, remoteFailed, type SshError } from './ssh-errors';

/** Options of one remote command. */
export interface ExecOptions extends RemoteCommandOptions {
  /** Kill the command (its whole process group) after this long; the result then has `timedOut`. */
  readonly timeoutMs?: number;
  /** Kill the command when this aborts; the result then has `aborted`. */
  readonly signal?: AbortSignal;
  /**
   * Sent to the command's stdin, then EOF. Without it stdin is closed at once, so nothing waits for
   * input. A function is called when the channel opens and what it returns is piped to it (a file
   * sent as it is read, never whole in memory); a read error ends the input and fails the call.
   */
  readonly stdin?: string | Buffer | (() => Readable);
  /** Every stdout chunk as it arrives (the result keeps only the tail). */
  readonly onStdout?: (chunk: Buffer) => void;
  /** Every stderr chunk as it arrives. */
  readonly onStderr?: (chunk: Buffer) => void;
  /** Bytes of stdout and of stderr kept in the result (default 64 KiB each, the last ones). */
  readonly tailBytes?: number;
}

/**
 * How a remote command ended. A non-zero exit, a signal, a timeout or an
 * abort is a result, not an exception; only a lost connection or a channel
 * the server refuses throws.
 */
export interface ExecResult {
  /** The command as run, for logs (quoted argv, with `sudo -n --`/`env` when used). */
  readonly command: string;
  /** Exit status, or null when the command was killed by a signal or never reported one. */
  readonly exitCode: number | null;
  /** The signal that ended it (`KILL`, `TERM`, ...), if any. */
  readonly signal: string | null;
  /** The remote process id, which is also its process group (null if the shell did not report it). */
  readonly pid: number | null;
  /** The last `tailBytes` of stdout, as UTF-8. */
  readonly stdout: string;
  readonly stderr: string;
  readonly stdoutBytes: number;
  readonly stderrBytes: number;
  readonly stdoutTruncated: boolean;
  readonly stderrTruncated: boolean;
  readonly timedOut: boolean;
  readonly aborted: boolean;
  readonly durationMs: number;
}

/** What a running command needs from its session. */
export interface ExecContext {
  readonly client: Client;
  readonly endpoint: string;
  /** The error that ended the session, if it has ended. */
  lost(): SshError | null;
  /** Registers a callback for the session ending; returns the unregister function. */
  onLost(listener: (error: SshError) => void): () => void;
  /** Kills a remote process group (TERM, then KILL), on another channel. */
  killProcessGroup(pid: number, sudo: boolean): Promise<void>;
}

/** How long a killed command gets to report its exit before its channel is closed from our side. */
const KILL_GRACE_MS = 3_000;

const NOTHING = Buffer.alloc(0);

/**
 * The start of stderr until the wrapper's pid line ({@link buildRemoteCommand}) has been taken out:
 * holds bytes back while the line may still come, then passes everything on.
 */
export class PidLineFilter {
  private head: Buffer | null = NOTHING;
  /** The remote pid, once the line was found (null when it was not, or not yet). */
  pid: number | null = null;

  /** True until the pid line has been taken out, or 4 KiB went by without one. */
  get waiting(): boolean {
    return this.head !== null;
  }

  /** The command's own stderr in `chunk` (empty while the pid line may still come). */
  write(chunk: Buffer): Buffer {
    if (this.head === null) {
      return chunk;
    }
    const joined = Buffer.concat([this.head, chunk]);
    const taken = takePidLine(joined);
    if (taken.pending) {
      this.head = joined;
      return NOTHING;
    }
    this.head = null;
    this.pid = taken.pid;
    return taken.rest;
  }

  /** What was held back, when the command ended before the line was complete; afterwards everything passes. */
  flush(): Buffer {
    const held = this.head ?? NOTHING;
    this.head = null;
    return held;
  }
}

/** What killing a command does, given what is known of its remote process. */
export type KillStep = 'kill-group' | 'close-channel' | 'await-pid';

/**
 * sshd refuses SSH "signal" requests for root sessions, and closing the channel leaves the process
 * running, so a known process group is killed from a second channel. Without a pid (the shell did
 * not report one) closing the channel is all there is; while the pid line is on its way, the kill
 * waits for it.
 */
export function killStep(pid: number | null, pidLineWaiting: boolean): KillStep {
  if (pid !== null) {
    return 'kill-group';
  }
  return pidLineWaiting ? 'await-pid' : 'close-channel';
}

/**
 * Where a remote command is: `opening` (the session channel requested), `running` (channel open,
 * stdin sent), `killing` (a timeout or abort: the group kill in flight, or waiting for the pid
 * line, with a grace period before the channel is closed from our side), `settled` (resolved or
 * rejected; nothing more happens).
 */
export type ExecPhase = 'opening' | 'running' | 'killing' | 'settled';

/** Runs `argv` on a new session channel. See {@link ExecResult}. */
export function runRemoteCommand(context: ExecContext, argv: readonly string[], options: ExecOptions = {}): Promise<ExecResult> {
  let command: string;
  let wire: string;
  try {
    command = displayCommand(argv, options);
    wire = buildRemoteCommand(argv, options);
  } catch (error) {
    // Bad argv is reported like every other failure: as a rejection, never a synchronous throw.
    return Promise.reject(error);
  }
  const lostAlready = context.lost();
  if (lostAlready !== null) {
    return Promise.reject(lostAlready);
  }
  return new RemoteExecution(context, command, options).run(wire);
}

/** One command on one channel: a method per event of the channel, each moving {@link ExecPhase} on. */
export class RemoteExecution {
  private currentPhase: ExecPhase = 'opening';
  private readonly started = Date.now();
  private readonly stdout: OutputTail;
  private readonly stderr: OutputTail;
  private readonly pidLine = new PidLineFilter();
  private exitCode: number | null = null;
  private exitSignal: string | null = null;
  private timedOut = false;
  private aborted = false;
  private stdinError: Error | null = null;
  private channel: ClientChannel | null = null;
  private groupKill: Promise<void> | null = null;
  private timeoutTimer: NodeJS.Timeout | undefined;
  private graceTimer: NodeJS.Timeout | undefined;
  private stopWatchingLoss: () => void = () => undefined;
  private resolve: (result: ExecResult) => void = () => undefined;
  private reject: (error: SshError) => void = () => undefined;
  private readonly onAbort = (): void => {
    this.aborted = true;
    this.kill();
  };

  constructor(
    private readonly context: ExecContext,
    private readonly command: string,
    private readonly options: ExecOptions,
  ) {
    this.stdout = new OutputTail(options.tailBytes);
    this.stderr = new OutputTail(options.tailBytes);
  }

  get phase(): ExecPhase {
    return this.currentPhase;
  }

  /** `opening`: asks for the channel. Rejects only for a lost connection or a refused channel. */
  run(wire: string): Promise<ExecResult> {
    return new Promise<ExecResult>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
      this.stopWatchingLoss = this.context.onLost((error) => this.fail(error));
      if (this.options.signal?.aborted === true) {
        this.settle();
        resolve({
          command: this.command, exitCode: null, signal: null, pid: null, stdout: '', stderr: '', stdoutBytes: 0, stderrBytes: 0,
          stdoutTruncated: false, stderrTruncated: false, timedOut: false, aborted: true, durationMs: 0,
        });
        return;
      }
      this.options.signal?.addEventListener('abort', this.onAbort, { once: true });
      try {
        this.context.client.exec(wire, (error, opened) => {
          if (error) {
            this.fail(this.context.lost() ?? remoteFailed(this.context.endpoint, 'Opening a command channel',
              `${readRawError(error).message}. The server may limit sessions per connection (MaxSessions).`, error));
            return;
          }
          this.opened(opened);
        });
      } catch (error) {
        this.fail(this.context.lost() ?? connectionLost(this.context.endpoint, 'not connected', error));
      }
    });
  }

  /** `opening` → `running`: wires the channel, sends stdin, starts the timeout. */
  private opened(opened: ClientChannel): void {
    this.channel = opened;
    if (this.currentPhase === 'settled') {
      opened.close();
      return;
    }
    this.currentPhase = 'running';
    opened.on('data', (chunk: Buffer) => {
      this.stdout.write(chunk);
      this.options.onStdout?.(chunk);
    });
    opened.stderr.on('data', (chunk: Buffer) => this.stderrData(chunk));
    opened.on('exit', (code: number | null, signal?: string) => {
      this.exitCode = typeof code === 'number' ? code : null;
      this.exitSignal = typeof signal === 'string' ? signal.replace(/^SIG/, '') : null;
    });
    // After a kill, report only once the whole group is gone, not just its leader.
    opened.on('close', () => (this.groupKill === null ? this.finish() : void this.groupKill.then(() => this.finish())));
    opened.on('error', () => undefined);
    const stdin = this.options.stdin;
    if (typeof stdin === 'function') {
      const source = stdin();
      // The command sees its input end early (and cleans up after itself); the call fails with the read error.
      source.once('error', (error) => {
        this.stdinError = error;
        opened.end();
      });
      source.pipe(opened);
    } else {
      opened.end(stdin);
    }
    if (this.options.timeoutMs !== undefined) {
      this.timeoutTimer = setTimeout(() => {
        this.timedOut = true;
        this.kill();
      }, Math.max(0, this.options.timeoutMs - (Date.now() - this.started)));
    }
  }

  private stderrData(chunk: Buffer): void {
    const waiting = this.pidLine.waiting;
    this.emitStderr(this.pidLine.write(chunk));
    if (waiting && !this.pidLine.waiting && this.currentPhase === 'killing') {
      // The kill was waiting for this line.
      this.killStepNow(killStep(this.pidLine.pid, false));
    }
  }

  /** `running` → `killing` (a timeout or an abort); does nothing before the channel is open or a second time. */
  private kill(): void {
    if (this.currentPhase !== 'running' || this.channel === null) {
      return;
    }
    this.currentPhase = 'killing';
    const open = this.channel;
    this.graceTimer = setTimeout(() => {
      open.close();
      this.finish();
    }, KILL_GRACE_MS);
    this.killStepNow(killStep(this.pidLine.pid, this.pidLine.waiting));
  }

  private killStepNow(step: KillStep): void {
    const open = this.channel;
    const pid = this.pidLine.pid;
    if (open === null) {
      return;
    }
    if (step === 'close-channel') {
      open.close();
    } else if (step === 'kill-group' && pid !== null && this.groupKill === null) {
      this.groupKill = this.context.killProcessGroup(pid, this.options.sudo === true).catch(() => open.close());
    }
  }

  /** The channel closed (or the grace period ran out): → `settled` with the result, or with the lost connection. */
  private finish(): void {
    if (this.currentPhase === 'settled') {
      return;
    }
    if (this.stdinError !== null) {
      this.fail(remoteFailed(this.context.endpoint, 'Reading the input sent to a command', `${this.stdinError.message}; its input ended there.`));
      return;
    }
    const lost = this.context.lost();
    if (lost !== null && this.exitCode === null && this.exitSignal === null && !this.timedOut && !this.aborted) {
      this.fail(lost);
      return;
    }
    this.emitStderr(this.pidLine.flush());
    this.settle();
    this.resolve({
      command: this.command,
      exitCode: this.exitCode,
      signal: this.exitSignal,
      pid: this.pidLine.pid,
      stdout: this.stdout.text(),
      stderr: this.stderr.text(),
      stdoutBytes: this.stdout.total,
      stderrBytes: this.stderr.total,
      stdoutTruncated: this.stdout.truncated,
      stderrTruncated: this.stderr.truncated,
      timedOut: this.timedOut,
      aborted: this.aborted,
      durationMs: Date.now() - this.started,
    });
  }

  private fail(error: SshError): void {
    if (this.currentPhase !== 'settled') {
      this.settle();
      this.reject(error);
    }
  }

  private settle(): void {
    this.currentPhase = 'settled';
    clearTimeout(this.timeoutTimer);
    clearTimeout(this.graceTimer);
    this.options.signal?.removeEventListener('abort', this.onAbort);
    this.stopWatchingLoss();
  }

  private emitStderr(chunk: Buffer): void {
    if (chunk.length > 0) {
      this.stderr.write(chunk);
      this.options.onStderr?.(chunk);
    }
  }
}

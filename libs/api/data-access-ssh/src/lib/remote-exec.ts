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
  /** Sent to the command's stdin, then EOF. Without it stdin is closed at once, so nothing waits for input. */
  readonly stdin?: string | Buffer;
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
  const started = Date.now();
  return new Promise<ExecResult>((resolve, reject) => {
    const stdout = new OutputTail(options.tailBytes);
    const stderr = new OutputTail(options.tailBytes);
    let exitCode: number | null = null;
    let exitSignal: string | null = null;
    let pid: number | null = null;
    let stderrHead: Buffer | null = Buffer.alloc(0);
    let timedOut = false;
    let aborted = false;
    let settled = false;
    let channel: ClientChannel | null = null;
    let timer: NodeJS.Timeout | undefined;
    let graceTimer: NodeJS.Timeout | undefined;

    const cleanup = () => {
      settled = true;
      clearTimeout(timer);
      clearTimeout(graceTimer);
      options.signal?.removeEventListener('abort', onAbort);
      stopWatchingLoss();
    };
    const fail = (error: SshError) => {
      if (!settled) {
        cleanup();
        reject(error);
      }
    };
    const finish = () => {
      if (settled) {
        return;
      }
      const lost = context.lost();
      if (lost !== null && exitCode === null && exitSignal === null && !timedOut && !aborted) {
        fail(lost);
        return;
      }
      flushStderrHead();
      cleanup();
      resolve({
        command,
        exitCode,
        signal: exitSignal,
        pid,
        stdout: stdout.text(),
        stderr: stderr.text(),
        stdoutBytes: stdout.total,
        stderrBytes: stderr.total,
        stdoutTruncated: stdout.truncated,
        stderrTruncated: stderr.truncated,
        timedOut,
        aborted,
        durationMs: Date.now() - started,
      });
    };
    const emitStderr = (chunk: Buffer) => {
      if (chunk.length > 0) {
        stderr.write(chunk);
        options.onStderr?.(chunk);
      }
    };
    const flushStderrHead = () => {
      if (stderrHead !== null) {
        const head = stderrHead;
        stderrHead = null;
        emitStderr(head);
      }
    };
    let killing = false;
    let groupKill: Promise<void> | null = null;
    const killGroup = () => {
      if (pid !== null && channel !== null && groupKill === null && !settled) {
        const open = channel;
        // sshd refuses SSH "signal" requests for root sessions, and closing the
        // channel leaves the process running, so the group is killed from a second channel.
        groupKill = context.killProcessGroup(pid, options.sudo === true).catch(() => open.close());
      }
    };
    const kill = () => {
      if (settled || channel === null || killing) {
        return;
      }
      killing = true;
      const open = channel;
      graceTimer = setTimeout(() => {
        open.close();
        finish();
      }, KILL_GRACE_MS);
      if (pid !== null) {
        killGroup();
      } else if (stderrHead === null) {
        open.close();
      }
      // Otherwise the pid line is still on its way; the stderr handler kills the group.
    };
    function onAbort() {
      aborted = true;
      kill();
    }
    const stopWatchingLoss = context.onLost((error) => fail(error));

    if (options.signal?.aborted === true) {
      cleanup();
      resolve({
        command, exitCode: null, signal: null, pid: null, stdout: '', stderr: '', stdoutBytes: 0, stderrBytes: 0,
        stdoutTruncated: false, stderrTruncated: false, timedOut: false, aborted: true, durationMs: 0,
      });
      return;
    }
    options.signal?.addEventListener('abort', onAbort, { once: true });

    try {
      context.client.exec(wire, (error, opened) => {
        if (error) {
          fail(context.lost() ?? remoteFailed(context.endpoint, 'Opening a command channel',
            `${readRawError(error).message}. The server may limit sessions per connection (MaxSessions).`, error));
          return;
        }
        channel = opened;
        if (settled) {
          opened.close();
          return;
        }
        opened.on('data', (chunk: Buffer) => {
          stdout.write(chunk);
          options.onStdout?.(chunk);
        });
        opened.stderr.on('data', (chunk: Buffer) => {
          if (stderrHead === null) {
            emitStderr(chunk);
            return;
          }
          const taken = takePidLine(Buffer.concat([stderrHead, chunk]));
          if (taken.pending) {
            stderrHead = Buffer.concat([stderrHead, chunk]);
            return;
          }
          stderrHead = null;
          pid = taken.pid;
          emitStderr(taken.rest);
          if (killing) {
            if (pid === null) {
              opened.close();
            } else {
              killGroup();
            }
          }
        });
        opened.on('exit', (code: number | null, signal?: string) => {
          exitCode = typeof code === 'number' ? code : null;
          exitSignal = typeof signal === 'string' ? signal.replace(/^SIG/, '') : null;
        });
        // After a kill, report only once the whole group is gone, not just its leader.
        opened.on('close', () => (groupKill === null ? finish() : void groupKill.then(finish)));
        opened.on('error', () => undefined);
        opened.end(options.stdin);
        if (options.timeoutMs !== undefined) {
          timer = setTimeout(() => {
            timedOut = true;
            kill();
          }, Math.max(0, options.timeoutMs - (Date.now() - started)));
        }
      });
    } catch (error) {
      fail(context.lost() ?? connectionLost(context.endpoint, 'not connected', error));
    }
  });
}

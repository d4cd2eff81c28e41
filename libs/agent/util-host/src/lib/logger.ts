import { closeSync, openSync, writeSync } from 'node:fs';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** The agent's own log (agent.log). Never given the token. */
export interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/** Renders one log line: ISO time, level, message (newlines indented so a line stays one entry). */
export function formatLogLine(at: Date, level: LogLevel, message: string): string {
  return `${at.toISOString()} ${level.toUpperCase().padEnd(5)} ${message.replace(/\n/g, '\n    ')}\n`;
}

/**
 * Appends lines to a file with O_APPEND and a synchronous write, so the
 * last words before a crash are on disk; optionally echoes them to stderr.
 */
export class FileLogger implements Logger {
  private fd: number | null;

  constructor(
    path: string,
    private readonly echo: boolean,
    private readonly minLevel: LogLevel = 'info',
  ) {
    this.fd = openSync(path, 'a', 0o600);
  }

  debug(message: string): void {
    this.write('debug', message);
  }

  info(message: string): void {
    this.write('info', message);
  }

  warn(message: string): void {
    this.write('warn', message);
  }

  error(message: string): void {
    this.write('error', message);
  }

  close(): void {
    if (this.fd !== null) {
      closeSync(this.fd);
      this.fd = null;
    }
  }

  private write(level: LogLevel, message: string): void {
    if (LEVELS.indexOf(level) < LEVELS.indexOf(this.minLevel)) {
      return;
    }
    const line = formatLogLine(new Date(), level, message);
    try {
      if (this.fd !== null) {
        writeSync(this.fd, line);
      }
    } catch {
      // A full disk must not stop the agent; the events still go out.
    }
    if (this.echo) {
      process.stderr.write(line);
    }
  }
}

const LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

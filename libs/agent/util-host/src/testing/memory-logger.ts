import type { LogLevel, Logger } from '../lib/logger';

/** Keeps log lines for assertions. */
export class MemoryLogger implements Logger {
  readonly lines: { readonly level: LogLevel; readonly message: string }[] = [];

  debug(message: string): void {
    this.lines.push({ level: 'debug', message });
  }

  info(message: string): void {
    this.lines.push({ level: 'info', message });
  }

  warn(message: string): void {
    this.lines.push({ level: 'warn', message });
  }

  error(message: string): void {
    this.lines.push({ level: 'error', message });
  }

  text(): string {
    return this.lines.map((line) => `${line.level} ${line.message}`).join('\n');
  }
}

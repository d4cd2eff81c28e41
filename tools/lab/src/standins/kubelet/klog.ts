/**
 * Log lines in klog's format, as a kubelet writes them to the journal:
 * `I1130 04:31:00.123456    1234 file.go:123] "message" key="value"`.
 */
export type Severity = 'I' | 'W' | 'E';

function stamp(now: Date): string {
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  return `${pad(now.getUTCMonth() + 1)}${pad(now.getUTCDate())} ${pad(now.getUTCHours())}:${pad(now.getUTCMinutes())}:${pad(now.getUTCSeconds())}.${pad(now.getUTCMilliseconds() * 1000, 6)}`;
}

/** Writes one structured log line to stdout (the unit's journal). */
export function klog(severity: Severity, source: string, message: string, fields: Record<string, unknown> = {}): void {
  const rendered = Object.entries(fields)
    .map(([key, value]) => `${key}=${typeof value === 'string' ? JSON.stringify(value) : JSON.stringify(value) ?? 'null'}`)
    .join(' ');
  process.stdout.write(`${severity}${stamp(new Date())} ${String(process.pid).padStart(7)} ${source}] ${JSON.stringify(message)}${rendered ? ` ${rendered}` : ''}\n`);
}

export const info = (source: string, message: string, fields?: Record<string, unknown>) => klog('I', source, message, fields);
export const warn = (source: string, message: string, fields?: Record<string, unknown>) => klog('W', source, message, fields);
export const error = (source: string, message: string, fields?: Record<string, unknown>) => klog('E', source, message, fields);

import { readFileSync } from 'node:fs';

/** Whether a process exists and is not a zombie (a dead child nobody reaped still answers kill(0)). */
export function processAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The state letter follows the parenthesised command name.
    const close = stat.lastIndexOf(')');
    const state = stat.slice(close + 2, close + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

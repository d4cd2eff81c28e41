import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseAgentConfig, type AgentConfig } from '@ccos/agent/feature-steps';

export type LoadedConfig =
  | { readonly ok: true; readonly path: string; readonly config: AgentConfig; readonly warnings: readonly string[] }
  | { readonly ok: false; readonly message: string };

/** Reads and checks config.json; a failure is one message naming the file and every problem. */
export function loadConfig(file: string): LoadedConfig {
  const path = resolve(file);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    return { ok: false, message: `cannot read the config ${path}: ${(error as Error).message}` };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, message: `the config ${path} is not valid JSON: ${(error as Error).message}` };
  }
  const parsed = parseAgentConfig(value);
  if (!parsed.ok) {
    return { ok: false, message: `the config ${path} is invalid:\n  - ${parsed.problems.join('\n  - ')}` };
  }
  const warnings: string[] = [];
  if (parsed.ignoredKeys.length > 0) {
    warnings.push(`config keys not used by this agent version: ${parsed.ignoredKeys.join(', ')}`);
  }
  try {
    if ((statSync(path).mode & 0o077) !== 0) {
      warnings.push(`${path} is readable by other users although it holds the run's token (expected mode 0600)`);
    }
  } catch {
    // Read above; a race here changes nothing.
  }
  return { ok: true, path, config: parsed.config, warnings };
}

import { MAX_DIAGNOSTICS_BYTES } from '@ccos/agent/data-access-api';
import {
  createTarGz, formatCommand, type Clock, type CommandResult, type Executor, type FileSystem, type JsonObject, type TarEntry,
} from '@ccos/agent/util-host';
import type { InstallStep } from '@ccos/shared/domain';
import { scrubSecrets } from '@ccos/shared/util-redaction';
import type { AgentConfig } from './agent-config';
import { statePaths } from './host-paths';

export interface DiagnosticsInput {
  readonly config: AgentConfig;
  readonly agentVersion: string;
  readonly step: InstallStep;
  readonly message: string;
  /** The FAILED event's detail (code, hint, …). */
  readonly detail: JsonObject;
  readonly command?: CommandResult;
  readonly hostname: string;
}

/** The last `max` bytes of a file, or a note saying why there is none. */
async function fileTail(fs: FileSystem, path: string, max: number): Promise<Buffer> {
  try {
    const data = await fs.readFile(path);
    return data.length <= max ? data : Buffer.concat([Buffer.from(`[… ${data.length - max} earlier bytes cut]\n`), data.subarray(data.length - max)]);
  } catch (error) {
    return Buffer.from(`(${path}: ${(error as Error).message})\n`);
  }
}

function cut(text: string, max: number): string {
  const bytes = Buffer.from(text);
  return bytes.length <= max ? text : `[… ${bytes.length - max} earlier bytes cut]\n${bytes.subarray(bytes.length - max).toString('utf8')}`;
}

function commandText(result: CommandResult): string {
  return `$ ${formatCommand(result.argv)}\n# exit code: ${result.exitCode ?? 'none'}${result.signal ? `, signal ${result.signal}` : ''}${result.error ? `, error ${result.error}` : ''}; ${result.durationMs} ms\n\n${result.output}`;
}

/**
 * The diagnostics bundle of a failed run (.tar.gz, at most 8 MiB): the
 * agent's log, the spool, kubelet's journal and `systemctl status`, the
 * failing command's full output, the Ignition fetch status and a
 * summary.json. Collecting never fails: a missing piece is a note in it.
 * Every file passes through the secret scrubber first: kubelet's journal,
 * command output and the fetch status can quote tokens and keys.
 */
export async function collectDiagnostics(input: DiagnosticsInput, deps: { readonly exec: Executor; readonly fs: FileSystem; readonly clock: Clock }): Promise<Buffer> {
  const { config } = input;
  const paths = statePaths(config.stateDir);
  const run = async (argv: string[]) => {
    const result = await deps.exec.run(argv, { timeoutMs: 30_000 });
    return commandText(result);
  };
  const journal = await run(['journalctl', '-u', 'kubelet', '-n', '500', '--no-pager']);
  const status = await run(['systemctl', 'status', 'kubelet', '--no-pager']);
  const ignition = await deps.fs.readFile(paths.ignitionFetch).catch(() => Buffer.from(`${JSON.stringify({ fetched: false, note: 'APPLY_IGNITION did not fetch in this state folder' })}\n`));
  const mtimeMs = deps.clock.now();
  const summary: JsonObject = {
    runId: config.runId,
    nodeName: config.nodeName,
    nodeIp: config.nodeIp,
    vip: config.vip,
    apiUrl: config.apiUrl,
    hostname: input.hostname,
    agentVersion: input.agentVersion,
    startStep: config.startStep,
    failedStep: input.step,
    message: input.message,
    detail: input.detail,
    collectedAt: new Date(mtimeMs).toISOString(),
    files: ['summary.json', 'agent.log', 'spool.jsonl', 'kubelet-journal.txt', 'systemctl-status-kubelet.txt', 'ignition-fetch.json', ...(input.command ? ['failed-command.txt'] : [])],
  };
  for (let budget = 3 * 1024 * 1024; ; budget = Math.floor(budget / 2)) {
    const entries: TarEntry[] = [
      { name: 'summary.json', data: `${JSON.stringify(summary, null, 2)}\n`, mtimeMs },
      { name: 'agent.log', data: await fileTail(deps.fs, paths.log, budget), mtimeMs },
      { name: 'spool.jsonl', data: await fileTail(deps.fs, paths.spool, budget), mtimeMs },
      { name: 'kubelet-journal.txt', data: cut(journal, budget), mtimeMs },
      { name: 'systemctl-status-kubelet.txt', data: cut(status, budget), mtimeMs },
      { name: 'ignition-fetch.json', data: ignition, mtimeMs },
      ...(input.command ? [{ name: 'failed-command.txt', data: cut(commandText(input.command), budget), mtimeMs }] : []),
    ];
    const archive = createTarGz(entries.map(scrubbedEntry));
    if (archive.length <= MAX_DIAGNOSTICS_BYTES || budget < 64 * 1024) {
      return archive;
    }
  }
}

/** An entry of the bundle with tokens and private keys removed from its text. */
function scrubbedEntry(entry: TarEntry): TarEntry {
  const text = typeof entry.data === 'string' ? entry.data : Buffer.from(entry.data).toString('utf8');
  return { ...entry, data: scrubSecrets(text) };
}

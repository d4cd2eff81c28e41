import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { ApiClient } from './api-client';
import { APPROVALS_APPROVE, APPROVALS_LIST, APPROVALS_REJECT, CLUSTERS_FOUR_EYES } from './approvals.command';
import { AUDIT } from './audit.command';
import { AUTOSCALER_CONNECTION } from './autoscaler.command';
import { BATCHES_LIST, BATCHES_RETRY, BATCHES_SHOW } from './batches.command';
import { NODES_CLEAN } from './clean.command';
import { CLUSTERS_CHECK, CLUSTERS_LIMIT, CLUSTERS_LIST, CLUSTERS_PREPARE } from './clusters.command';
import { type CommandContext, type CommandSpec, usageError } from './command';
import { NODES_CREDENTIALS } from './credentials.command';
import { CSRS_APPROVE, CSRS_DENY, CSRS_LIST } from './csrs.command';
import { NODES_DELETE } from './delete.command';
import { CliError, EXIT, type ExitCode } from './exit-codes';
import { NODES_INSPECT } from './inspect.command';
import { NODES_CANCEL, NODES_INSTALL, NODES_RETRY, NODES_WATCH } from './install.command';
import { APPLY, INVENTORY_EXPORT, PLAN } from './inventory.command';
import { type Translate, languageOf, translator } from './messages';
import { NODES_ADD, NODES_LIST } from './nodes.command';
import type { Io, OutputFormat } from './output';
import { POOLS_LIST } from './pools.command';
import { NODES_REMOVE } from './removal.command';
import { ROLLOUT_CANCEL, ROLLOUT_PAUSE, ROLLOUT_RESUME, ROLLOUT_START, ROLLOUT_STATUS } from './rollout.command';
import { readStoredSession, sessionFile } from './session-store';
import { LOGIN, LOGOUT } from './session.command';
import { WEBHOOKS_ADD, WEBHOOKS_DELIVERIES, WEBHOOKS_LIST, WEBHOOKS_REMOVE } from './webhooks.command';

/** Every command, by its words. */
const COMMANDS: Record<string, CommandSpec> = {
  login: LOGIN,
  logout: LOGOUT,
  'clusters list': CLUSTERS_LIST,
  'clusters check': CLUSTERS_CHECK,
  'clusters prepare': CLUSTERS_PREPARE,
  'clusters limit': CLUSTERS_LIMIT,
  'nodes list': NODES_LIST,
  'nodes add': NODES_ADD,
  'nodes install': NODES_INSTALL,
  'nodes watch': NODES_WATCH,
  'nodes retry': NODES_RETRY,
  'nodes cancel': NODES_CANCEL,
  'nodes remove': NODES_REMOVE,
  'nodes delete': NODES_DELETE,
  'nodes clean': NODES_CLEAN,
  'nodes credentials': NODES_CREDENTIALS,
  'nodes inspect': NODES_INSPECT,
  'rollout start': ROLLOUT_START,
  'rollout status': ROLLOUT_STATUS,
  'rollout pause': ROLLOUT_PAUSE,
  'rollout resume': ROLLOUT_RESUME,
  'rollout cancel': ROLLOUT_CANCEL,
  'csrs list': CSRS_LIST,
  'csrs approve': CSRS_APPROVE,
  'csrs deny': CSRS_DENY,
  'pools list': POOLS_LIST,
  'batches list': BATCHES_LIST,
  'batches show': BATCHES_SHOW,
  'batches retry': BATCHES_RETRY,
  audit: AUDIT,
  'webhooks list': WEBHOOKS_LIST,
  'webhooks add': WEBHOOKS_ADD,
  'webhooks remove': WEBHOOKS_REMOVE,
  'webhooks deliveries': WEBHOOKS_DELIVERIES,
  'clusters four-eyes': CLUSTERS_FOUR_EYES,
  'approvals list': APPROVALS_LIST,
  'approvals approve': APPROVALS_APPROVE,
  'approvals reject': APPROVALS_REJECT,
  plan: PLAN,
  apply: APPLY,
  'inventory export': INVENTORY_EXPORT,
  'autoscaler connection': AUTOSCALER_CONNECTION,
};

const GLOBAL_OPTIONS = {
  server: { type: 'string' },
  output: { type: 'string', short: 'o' },
  help: { type: 'boolean', short: 'h' },
} as const;

const DEFAULT_SERVER = 'http://localhost:4000';

/** What the CLI runs with: arguments, environment, standard streams. */
export interface CliEnvironment {
  readonly argv: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly io: Io;
  readonly stdin: NodeJS.ReadStream;
}

/** Runs one command line and returns its exit code; never throws. */
export async function runCli({ argv, env, io, stdin }: CliEnvironment): Promise<ExitCode> {
  const language = languageOf(env);
  const t = translator(language);
  try {
    const { words, spec } = findCommand(argv, t);
    if (!spec) {
      io.out(t('usage'));
      return words.length === 0 ? EXIT.ok : EXIT.usage;
    }
    const parsed = parseCommandLine(argv, words.length, spec, t);
    if (parsed.values['help']) {
      io.out(t('usage'));
      return EXIT.ok;
    }
    const output = parsed.values['output'] ?? 'table';
    if (output !== 'table' && output !== 'json' && output !== 'yaml') {
      throw usageError(t, t('badOutput'));
    }
    const file = sessionFile(env);
    const stored = await readStoredSession(file);
    const server = (typeof parsed.values['server'] === 'string' ? parsed.values['server'] : undefined) ?? env['CCOS_SERVER'] ?? stored?.server ?? DEFAULT_SERVER;
    const token = env['CCOS_TOKEN'] || (stored && stored.server === server ? stored.token : null);
    const context: CommandContext = {
      flags: parsed.values,
      positionals: parsed.positionals,
      output: output as OutputFormat,
      language,
      t,
      io,
      env,
      server,
      sessionFile: file,
      api: () => {
        if (!token) {
          throw new CliError(t('notSignedIn'), EXIT.auth);
        }
        return new ApiClient(server, token, t, language);
      },
      anonymousApi: () => new ApiClient(server, null, t, language),
      readStdin: () => readAll(stdin),
      ask: (question, hidden) => ask(stdin, question, hidden === true),
    };
    return await spec.run(context);
  } catch (error) {
    if (error instanceof CliError) {
      io.err(error.message);
      return error.exitCode;
    }
    io.err(error instanceof Error ? error.message : String(error));
    return EXIT.failed;
  }
}

/** The command's words are the first one or two arguments that are not flags. */
function findCommand(argv: readonly string[], t: Translate): { words: string[]; spec: CommandSpec | null } {
  const words = argv.filter((arg) => !arg.startsWith('-')).slice(0, 2);
  if (argv.length === 0 || (words.length === 0 && argv.some((arg) => arg === '--help' || arg === '-h'))) {
    return { words: [], spec: null };
  }
  if (words.length === 0) {
    throw usageError(t, t('unknownCommand', { command: argv[0] ?? '' }));
  }
  const [first = '', second = ''] = words;
  const one = COMMANDS[first];
  if (one) {
    return { words: [first], spec: one };
  }
  const two = COMMANDS[`${first} ${second}`];
  if (two) {
    return { words: [first, second], spec: two };
  }
  throw usageError(t, t('unknownCommand', { command: [first, second].filter(Boolean).join(' ') }));
}

function parseCommandLine(argv: readonly string[], commandWords: number, spec: CommandSpec, t: Translate): { values: Record<string, string | boolean | undefined>; positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({ args: [...argv], options: { ...GLOBAL_OPTIONS, ...spec.options }, allowPositionals: true, strict: true });
    // The command's own words come first among the positionals.
    const rest = positionals.slice(commandWords);
    if (rest.length > spec.positionals.length) {
      throw usageError(t, `unexpected argument "${rest[spec.positionals.length]}"`);
    }
    return { values: values as Record<string, string | boolean | undefined>, positionals: rest };
  } catch (error) {
    if (error instanceof CliError) {
      throw error;
    }
    throw usageError(t, (error as Error).message);
  }
}

async function readAll(stream: NodeJS.ReadStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) {
    chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** One line from the terminal (null when stdin is not one), without echo when `hidden`. */
async function ask(stdin: NodeJS.ReadStream, question: string, hidden: boolean): Promise<string | null> {
  if (!stdin.isTTY) {
    return null;
  }
  process.stderr.write(question);
  // Hidden: readline echoes into a sink, so the password never reaches the screen.
  const sink = new Writable({ write: (_chunk, _encoding, done) => done() });
  const lines = createInterface({ input: stdin, output: hidden ? sink : process.stderr, terminal: true });
  try {
    return await new Promise<string>((resolve) => lines.once('line', resolve));
  } finally {
    if (hidden) {
      process.stderr.write('\n');
    }
    lines.close();
  }
}

import { readFile } from 'node:fs/promises';
import type { ParseArgsConfig } from 'node:util';
import { stringify } from 'yaml';
import { ClustersDocument, type ClustersQuery, NodesDocument, type NodesQuery } from '@ccos/shared/api-schema';
import type { ApiClient } from './api-client';
import { CliError, EXIT, type ExitCode } from './exit-codes';
import { type Language, type MessageKey, type Translate, columnTitles } from './messages';
import { type Io, type OutputFormat, table } from './output';

export type ClusterView = ClustersQuery['clusters'][number];
export type NodeView = NodesQuery['nodes'][number];
export type FlagValues = Record<string, string | boolean | undefined>;

/** What a command gets: its flags and positionals, the API, the words, and where to write. */
export interface CommandContext {
  readonly flags: FlagValues;
  readonly positionals: readonly string[];
  readonly output: OutputFormat;
  readonly language: Language;
  readonly t: Translate;
  readonly io: Io;
  readonly env: NodeJS.ProcessEnv;
  readonly server: string;
  /** The API with the current token (refused at once with exit 3 when there is none). */
  api(): ApiClient;
  /** The API without a token, for login. */
  anonymousApi(): ApiClient;
  /** All of standard input (a password piped in). */
  readStdin(): Promise<string>;
  /** Asks on the terminal; `hidden` does not echo what is typed. Null when not on a terminal. */
  ask(question: string, hidden?: boolean): Promise<string | null>;
  /** The session file login writes. */
  readonly sessionFile: string;
}

export interface CommandSpec {
  readonly options: NonNullable<ParseArgsConfig['options']>;
  /** Names of the positional arguments, in order (shown in usage errors). */
  readonly positionals: readonly string[];
  run(context: CommandContext): Promise<ExitCode>;
}

/** What a command listing one cluster's items says: how it asks for them, its columns (English headings) and each item's cells. */
export interface ClusterList<T> {
  readonly options?: CommandSpec['options'];
  fetch(context: CommandContext, clusterId: string): Promise<readonly T[]>;
  readonly columns: readonly string[];
  row(item: T, context: CommandContext): ReadonlyArray<string | number>;
  /** More tables after the first (a pool's hosts). */
  after?(context: CommandContext, items: readonly T[]): void;
}

/** `… list [--cluster C]`: the items as the API gave them with --output json|yaml, else one row each in the user's language. */
export function clusterListCommand<T>(list: ClusterList<T>): CommandSpec {
  return {
    options: { cluster: { type: 'string' }, ...list.options },
    positionals: [],
    async run(context) {
      const cluster = await resolveCluster(context);
      const items = await list.fetch(context, cluster.id);
      if (context.output !== 'table') {
        printJson(context, items);
        return EXIT.ok;
      }
      const c = columnTitles(context.language);
      context.io.out(table(list.columns.map((column) => c[column] ?? column), items.map((item) => list.row(item, context))));
      list.after?.(context, items);
      return EXIT.ok;
    },
  };
}

export function usageError(t: Translate, detail: string): CliError {
  return new CliError(t('badUsage', { detail }), EXIT.usage);
}

export function stringFlag(context: CommandContext, name: string): string | undefined {
  const value = context.flags[name];
  return typeof value === 'string' ? value : undefined;
}

export function integerFlag(context: CommandContext, name: string): number | undefined {
  const value = stringFlag(context, name);
  if (value === undefined) {
    return undefined;
  }
  if (!/^-?\d+$/.test(value)) {
    throw usageError(context.t, context.t('badNumber', { flag: `--${name}` }));
  }
  return Number(value);
}

/** A password from --password-file or --password-stdin (one trailing newline dropped); never from argv. */
export async function passwordFrom(context: CommandContext, required: boolean): Promise<string | null> {
  const file = stringFlag(context, 'password-file');
  const fromStdin = context.flags['password-stdin'] === true;
  if (file && fromStdin) {
    throw usageError(context.t, context.t('passwordSource'));
  }
  let text: string | null = null;
  if (file) {
    text = await readUserFile(context, file);
  } else if (fromStdin) {
    text = await context.readStdin();
  }
  if (text === null) {
    if (required) {
      throw usageError(context.t, context.t('passwordSource'));
    }
    return null;
  }
  const password = text.replace(/\r?\n$/, '');
  if (!password) {
    throw usageError(context.t, context.t('emptyPassword'));
  }
  return password;
}

/** A file the user named, as text; a file that cannot be read is a usage error naming it (never its content). */
export async function readUserFile(context: CommandContext, file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw usageError(context.t, `${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
}

/**
 * The SSH secret for a host: --private-key-file (with --passphrase-file for an encrypted key),
 * or a password from --password-file or --password-stdin. Never from argv, never printed.
 */
export async function sshSecretsFrom(context: CommandContext): Promise<{ readonly password: string } | { readonly privateKey: string; readonly passphrase?: string }> {
  const keyFile = stringFlag(context, 'private-key-file');
  const passphraseFile = stringFlag(context, 'passphrase-file');
  if (!keyFile) {
    if (passphraseFile) {
      throw usageError(context.t, context.t('passphraseNeedsKey'));
    }
    return { password: (await passwordFrom(context, true)) as string };
  }
  if (stringFlag(context, 'password-file') || context.flags['password-stdin'] === true) {
    throw usageError(context.t, context.t('oneSecret'));
  }
  const privateKey = await readUserFile(context, keyFile);
  if (!passphraseFile) {
    return { privateKey };
  }
  const passphrase = (await readUserFile(context, passphraseFile)).replace(/\r?\n$/, '');
  return passphrase ? { privateKey, passphrase } : { privateKey };
}

/** The answer as one JSON or YAML document (--output json|yaml). */
export function printJson(context: CommandContext, value: unknown): void {
  context.io.out(context.output === 'yaml' ? stringify(value).trimEnd() : JSON.stringify(value, null, 2));
}

/** One document per message for streams (watch, remove): a JSON line, or a YAML document after `---`. */
export function printJsonLine(context: CommandContext, value: unknown): void {
  context.io.out(context.output === 'yaml' ? `---\n${stringify(value).trimEnd()}` : JSON.stringify(value));
}

/** The cluster named by --cluster (id or name), or the only one. */
export async function resolveCluster(context: CommandContext): Promise<ClusterView> {
  const { clusters } = await context.api().request(ClustersDocument, {});
  const wanted = stringFlag(context, 'cluster');
  if (wanted) {
    const found = clusters.find((cluster) => cluster.id === wanted || cluster.name === wanted);
    if (!found) {
      throw new CliError(context.t('clusterNotFound', { cluster: wanted }), EXIT.notFound);
    }
    return found;
  }
  if (clusters.length === 0) {
    throw new CliError(context.t('noClusters'), EXIT.notFound);
  }
  if (clusters.length > 1) {
    throw usageError(context.t, context.t('severalClusters', { names: clusters.map((cluster) => cluster.name).join(', ') }));
  }
  return clusters[0] as ClusterView;
}

/** The NODE positional of a node command (an id or a host name). */
export function nodeArgument(context: CommandContext): string {
  const node = context.positionals[0];
  if (!node) {
    throw usageError(context.t, context.t('missingArgument', { what: 'NODE' }));
  }
  return node;
}

/** How a command that destroys something asks for a name (a host's, a cluster's): its prompt, and what it says when none can be asked or the answer differs. */
export interface NameConfirmation {
  readonly prompt: MessageKey;
  readonly needed: MessageKey;
  readonly aborted: MessageKey;
}

/**
 * Whether the user confirmed by typing `name` (or gave --yes); the prompt gets it as `{name}`.
 * Without a terminal to ask it is a usage error; a different answer is said on stderr and answers false.
 */
export async function confirmedByName(context: CommandContext, name: string, words: NameConfirmation): Promise<boolean> {
  if (context.flags['yes'] === true) {
    return true;
  }
  const answer = await context.ask(context.t(words.prompt, { name }));
  if (answer === null) {
    throw usageError(context.t, context.t(words.needed));
  }
  if (answer.trim() !== name) {
    context.io.err(context.t(words.aborted));
    return false;
  }
  return true;
}

/** The node of a list by its id, or by its host name among those not removed. */
export function findNode(nodes: readonly NodeView[], nameOrId: string): NodeView | undefined {
  return nodes.find((node) => node.id === nameOrId) ?? nodes.find((node) => node.hostname === nameOrId && node.status !== 'REMOVED');
}

/** The node named by id or host name, in --cluster or in any cluster. */
export async function resolveNode(context: CommandContext, nameOrId: string): Promise<NodeView> {
  const api = context.api();
  const clusters = stringFlag(context, 'cluster') ? [await resolveCluster(context)] : (await api.request(ClustersDocument, {})).clusters;
  for (const cluster of clusters) {
    const { nodes } = await api.request(NodesDocument, { clusterId: cluster.id });
    const found = findNode(nodes, nameOrId);
    if (found) {
      return found;
    }
  }
  throw new CliError(context.t('nodeNotFound', { node: nameOrId }), EXIT.notFound);
}

/**
 * A command that changes one node once its host name is typed on a terminal (or --yes): it
 * resolves NODE, asks, runs `act`, and prints the result as JSON/YAML or as `done` says it.
 */
export function confirmedNodeCommand<T>(words: NameConfirmation, act: (context: CommandContext, node: NodeView) => Promise<T>, done: (context: CommandContext, result: T) => string): CommandSpec {
  return {
    options: { cluster: { type: 'string' }, yes: { type: 'boolean' } },
    positionals: ['NODE'],
    async run(context) {
      const node = await resolveNode(context, nodeArgument(context));
      if (!(await confirmedByName(context, node.hostname, words))) {
        return EXIT.failed;
      }
      const result = await act(context, node);
      if (context.output !== 'table') {
        printJson(context, result);
      } else {
        context.io.out(done(context, result));
      }
      return EXIT.ok;
    },
  };
}

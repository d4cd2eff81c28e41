import { readFile } from 'node:fs/promises';
import { AddNodeDocument, type AddNodeMutationVariables, NodesDocument } from '@ccos/shared/api-schema';
import { type CommandContext, type CommandSpec, type NodeView, passwordFrom, printJson, resolveCluster, stringFlag, usageError } from './command';
import { EXIT } from './exit-codes';
import { parseHostsCsv } from './hosts-csv';
import { columnTitles, serverText } from './messages';
import { table } from './output';

const SETTLED_AFTER_ADD = ['READY_TO_INSTALL', 'AUTH_FAILED', 'UNREACHABLE', 'HOST_KEY_CHANGED', 'PRECHECK_FAILED'];

export const NODES_LIST: CommandSpec = {
  options: { cluster: { type: 'string' } },
  positionals: [],
  async run(context) {
    const cluster = await resolveCluster(context);
    const { nodes } = await context.api().request(NodesDocument, { clusterId: cluster.id });
    if (context.output !== 'table') {
      printJson(context, nodes);
    } else {
      printNodes(context, nodes);
    }
    return EXIT.ok;
  },
};

function printNodes(context: CommandContext, nodes: readonly NodeView[]): void {
  const c = columnTitles(context.language);
  context.io.out(
    table(
      [c['ID'], c['HOSTNAME'], c['IP'], c['STATUS'], c['REASON']].map(String),
      nodes.map((node) => [node.id, node.hostname, `${node.ip}:${node.sshPort}`, node.status, serverText(context.language, node.statusReason, node.statusReasonCode, node.statusReasonParams)]),
    ),
  );
}

type AddInput = AddNodeMutationVariables['input'];

/** `nodes add`: one host from flags, or every row of --from-csv, with one password or key for all. */
export const NODES_ADD: CommandSpec = {
  options: {
    cluster: { type: 'string' },
    hostname: { type: 'string' },
    ip: { type: 'string' },
    port: { type: 'string' },
    user: { type: 'string' },
    'from-csv': { type: 'string' },
    'password-file': { type: 'string' },
    'password-stdin': { type: 'boolean' },
    'private-key-file': { type: 'string' },
    wait: { type: 'boolean' },
  },
  positionals: [],
  async run(context) {
    const { t } = context;
    const hosts = await hostsToAdd(context);
    const keyFile = stringFlag(context, 'private-key-file');
    const privateKey = keyFile ? await readFile(keyFile, 'utf8').catch((error: NodeJS.ErrnoException) => Promise.reject(usageError(t, `${keyFile}: ${error.code ?? error.message}`))) : null;
    const password = await passwordFrom(context, !privateKey);
    const cluster = await resolveCluster(context);
    const api = context.api();
    const added: NodeView[] = [];
    for (const host of hosts) {
      const input: AddInput = { ...host, clusterId: cluster.id, ...(privateKey ? { privateKey } : { password }) };
      const { addNode } = await api.request(AddNodeDocument, { input });
      added.push(addNode);
      if (context.output === 'table') {
        context.io.out(t('nodeAdded', { hostname: addNode.hostname, ip: addNode.ip ?? '', id: addNode.id, status: addNode.status }));
      }
    }
    const settled = context.flags['wait'] ? await waitUntilChecked(context, cluster.id, added) : added;
    if (context.output !== 'table') {
      printJson(context, settled);
    } else if (context.flags['wait']) {
      for (const node of settled) {
        context.io.out(t('nodeSettled', { hostname: node.hostname, status: node.status, reason: node.statusReason ? ` (${serverText(context.language, node.statusReason, node.statusReasonCode, node.statusReasonParams)})` : '' }));
      }
    }
    return settled.every((node) => node.status === 'ADDING' || node.status === 'READY_TO_INSTALL') ? EXIT.ok : EXIT.failed;
  },
};

async function hostsToAdd(context: CommandContext): Promise<Array<Pick<AddInput, 'hostname' | 'ip' | 'sshPort' | 'sshUser'>>> {
  const { t } = context;
  const csv = stringFlag(context, 'from-csv');
  const port = (value: string | null | undefined, where: (detail: string) => string) => {
    if (value == null || value === '') {
      return 22;
    }
    const number = Number(value);
    if (!/^\d+$/.test(value) || number < 1 || number > 65535) {
      throw usageError(t, where(t('badPort', { value })));
    }
    return number;
  };
  if (!csv) {
    const hostname = stringFlag(context, 'hostname');
    const ip = stringFlag(context, 'ip');
    if (!hostname || !ip) {
      throw usageError(t, t('missingArgument', { what: hostname ? '--ip' : '--hostname' }));
    }
    return [{ hostname, ip, sshPort: port(stringFlag(context, 'port'), (detail) => detail), sshUser: stringFlag(context, 'user') ?? 'root' }];
  }
  if (stringFlag(context, 'hostname') || stringFlag(context, 'ip')) {
    throw usageError(t, '--from-csv and --hostname/--ip');
  }
  let text: string;
  try {
    text = await readFile(csv, 'utf8');
  } catch (error) {
    throw usageError(t, `${csv}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  const { header, hosts } = parseHostsCsv(text);
  if (!header.includes('hostname') || !header.includes('ip')) {
    throw usageError(t, t('csvColumns', { file: csv, header: header.join(',') }));
  }
  return hosts.map((host) => {
    const where = (detail: string) => t('csvRow', { file: csv, line: host.line, detail });
    if (!host.hostname || !host.ip) {
      throw usageError(t, where(t('missingArgument', { what: host.hostname ? 'ip' : 'hostname' })));
    }
    return { hostname: host.hostname, ip: host.ip, sshPort: port(host.port, where), sshUser: host.user ?? 'root' };
  });
}

/** Polls until every node added has left ADDING (SSH checked, agent copied or a reason given). */
async function waitUntilChecked(context: CommandContext, clusterId: string, added: readonly NodeView[], timeoutMs = 300_000): Promise<NodeView[]> {
  const ids = new Set(added.map((node) => node.id));
  const started = Date.now();
  for (;;) {
    const { nodes } = await context.api().request(NodesDocument, { clusterId });
    const mine = nodes.filter((node) => ids.has(node.id));
    if (mine.every((node) => SETTLED_AFTER_ADD.includes(node.status)) || Date.now() - started > timeoutMs) {
      return mine;
    }
    await new Promise((wake) => setTimeout(wake, 500));
  }
}

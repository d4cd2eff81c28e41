import { AddNodeDocument, type AddNodeMutationVariables, AddNodesDocument, type AddNodesMutation, NodesDocument } from '@ccos/shared/api-schema';
import { type CommandContext, type CommandSpec, type NodeView, clusterListCommand, printJson, readUserFile, resolveCluster, sshSecretsFrom, stringFlag, usageError } from './command';
import { EXIT, type ExitCode } from './exit-codes';
import { planCsvAdd } from './hosts-csv';
import { fieldWords, serverText } from './messages';

const SETTLED_AFTER_ADD = ['READY_TO_INSTALL', 'AUTH_FAILED', 'UNREACHABLE', 'HOST_KEY_CHANGED', 'PRECHECK_FAILED'];

export const NODES_LIST = clusterListCommand({
  fetch: async (context, clusterId) => (await context.api().request(NodesDocument, { clusterId })).nodes,
  columns: ['ID', 'HOSTNAME', 'IP', 'STATUS', 'REASON'],
  row: (node, context) => [node.id, node.hostname, `${node.ip}:${node.sshPort}`, node.status, serverText(context.language, node.statusReason, node.statusReasonCode, node.statusReasonParams)],
});

type AddInput = AddNodeMutationVariables['input'];
type AddNodesResult = AddNodesMutation['addNodes'];
type RowProblem = AddNodesResult['problems'][number];

/**
 * `nodes add`: one host from flags (addNode), or the hosts of --from-csv in one addNodes request,
 * with one password or key for all.
 */
export const NODES_ADD: CommandSpec = {
  options: {
    cluster: { type: 'string' },
    hostname: { type: 'string' },
    ip: { type: 'string' },
    port: { type: 'string' },
    user: { type: 'string' },
    'from-csv': { type: 'string' },
    partial: { type: 'boolean' },
    'password-file': { type: 'string' },
    'password-stdin': { type: 'boolean' },
    'private-key-file': { type: 'string' },
    'passphrase-file': { type: 'string' },
    wait: { type: 'boolean' },
    'acknowledge-old-certificates': { type: 'boolean' },
  },
  positionals: [],
  async run(context) {
    const { t } = context;
    const csv = stringFlag(context, 'from-csv');
    if (csv && context.flags['acknowledge-old-certificates']) {
      throw usageError(t, t('acknowledgeNeedsOneHost'));
    }
    if (csv) {
      return addFromCsv(context, csv);
    }
    if (context.flags['partial']) {
      throw usageError(t, t('partialNeedsCsv'));
    }
    const hostname = stringFlag(context, 'hostname');
    const ip = stringFlag(context, 'ip');
    if (!hostname || !ip) {
      throw usageError(t, t('missingArgument', { what: hostname ? '--ip' : '--hostname' }));
    }
    const host = { hostname, ip, sshPort: portFlag(context) ?? 22, sshUser: stringFlag(context, 'user') ?? 'root' };
    const secrets = await sshSecretsFrom(context);
    const cluster = await resolveCluster(context);
    const acknowledged = context.flags['acknowledge-old-certificates'] === true;
    const input: AddInput = { ...host, clusterId: cluster.id, ...secrets, ...(acknowledged ? { acknowledgeOldCertificates: true } : {}) };
    const { addNode } = await context.api().request(AddNodeDocument, { input });
    if (context.output === 'table') {
      context.io.out(t('nodeAdded', { hostname: addNode.hostname, ip: addNode.ip ?? '', id: addNode.id, status: addNode.status }));
    }
    return finishAdd(context, cluster.id, [addNode]);
  },
};

function portFlag(context: CommandContext): number | undefined {
  const value = stringFlag(context, 'port');
  if (value === undefined) {
    return undefined;
  }
  const number = Number(value);
  if (!/^\d+$/.test(value) || number < 1 || number > 65535) {
    throw usageError(context.t, context.t('badPort', { value }));
  }
  return number;
}

/** After the adds: --wait follows the nodes until their checks settle; ok while none has failed. */
async function finishAdd(context: CommandContext, clusterId: string, added: readonly NodeView[], extra: Record<string, unknown> | null = null): Promise<ExitCode> {
  const { t } = context;
  const settled = context.flags['wait'] && added.length > 0 ? await waitUntilChecked(context, clusterId, added.map((node) => node.id)) : added;
  if (context.output !== 'table') {
    printJson(context, extra ? { added: settled, ...extra } : settled);
  } else if (context.flags['wait']) {
    for (const node of settled) {
      context.io.out(t('nodeSettled', { hostname: node.hostname, status: node.status, reason: node.statusReason ? ` (${serverText(context.language, node.statusReason, node.statusReasonCode, node.statusReasonParams)})` : '' }));
    }
  }
  return settled.every((node) => node.status === 'ADDING' || node.status === 'READY_TO_INSTALL') ? EXIT.ok : EXIT.failed;
}

/**
 * `nodes add --from-csv FILE`: every row is checked before anything is stored (the API's
 * addNodes, one request), and every problem is reported on its line at once; nothing is added
 * while a row has a problem unless --partial. Rows the cluster already has under the same name
 * and address are skipped and said so, so a corrected file can simply be run again.
 */
async function addFromCsv(context: CommandContext, file: string): Promise<ExitCode> {
  const { t } = context;
  if (stringFlag(context, 'hostname') || stringFlag(context, 'ip')) {
    throw usageError(t, t('csvAndHost'));
  }
  const text = await readUserFile(context, file);
  const defaults = { sshPort: portFlag(context) ?? 22, sshUser: stringFlag(context, 'user') ?? 'root' };
  if (planCsvAdd(text, [], defaults).rows.length === 0) {
    throw usageError(t, t('csvNoHosts', { file }));
  }
  const secrets = await sshSecretsFrom(context);
  const cluster = await resolveCluster(context);
  const api = context.api();
  const before = (await api.request(NodesDocument, { clusterId: cluster.id })).nodes;
  const plan = planCsvAdd(text, before, defaults);
  const skipped = plan.skipped.map(({ row, node }) => ({ line: row.line, hostname: row.hostname, ip: row.ip, nodeId: node.id, status: node.status }));
  if (context.output === 'table') {
    for (const row of skipped) {
      context.io.out(t('csvRow', { file, line: row.line, detail: t('csvSkipped', { hostname: row.hostname, ip: row.ip, id: row.nodeId, status: row.status }) }));
    }
  }
  let result: AddNodesResult | null = null;
  if (plan.remaining > 0) {
    const { addNodes } = await api.request(AddNodesDocument, {
      input: { clusterId: cluster.id, list: plan.list, sshPort: defaults.sshPort, sshUser: defaults.sshUser, addValidRows: context.flags['partial'] === true, ...secrets },
    });
    result = addNodes;
  }
  const refusedRows = (result?.rows ?? []).filter((row) => row.problems.length > 0);
  const requestProblems = result?.problems ?? [];
  if (context.output === 'table') {
    for (const problem of requestProblems) {
      context.io.err(t('csvFileProblem', { file, detail: problemText(context, problem) }));
    }
    for (const row of refusedRows) {
      for (const problem of row.problems) {
        context.io.err(t('csvRow', { file, line: row.line, detail: problemText(context, problem) }));
      }
    }
  }
  const ids = new Set((result?.rows ?? []).flatMap((row) => (row.nodeId ? [row.nodeId] : [])));
  const added = ids.size > 0 ? (await api.request(NodesDocument, { clusterId: cluster.id })).nodes.filter((node) => ids.has(node.id)) : [];
  if (context.output === 'table') {
    for (const node of added) {
      context.io.out(t('nodeAdded', { hostname: node.hostname, ip: node.ip ?? '', id: node.id, status: node.status }));
    }
    if (added.length === 0 && (refusedRows.length > 0 || requestProblems.length > 0)) {
      context.io.err(t(context.flags['partial'] ? 'csvNothingPassed' : 'csvNothingAdded', { file, refused: refusedRows.length }));
    } else if (plan.remaining === 0) {
      context.io.out(t('csvNothingToAdd', { file, skipped: skipped.length }));
    } else {
      context.io.out(t('csvSummary', { file, added: added.length, skipped: skipped.length, refused: refusedRows.length }));
    }
  }
  const refused = refusedRows.map((row) => ({ line: row.line, hostname: row.hostname, ip: row.ip, problems: row.problems }));
  const code = await finishAdd(context, cluster.id, added, { skipped, refused, problems: requestProblems });
  return refusedRows.length > 0 || requestProblems.length > 0 ? EXIT.failed : code;
}

/** A row's problem in the CLI's language: the field's own words, then the API's coded text. */
function problemText(context: CommandContext, problem: RowProblem): string {
  return context.t('fieldProblem', { field: fieldWords(context.language, problem.field), problem: serverText(context.language, problem.message, problem.messageCode, problem.messageParams) });
}

/** Polls until every node added has left ADDING (SSH checked, agent copied or a reason given). */
export async function waitUntilChecked(context: CommandContext, clusterId: string, nodeIds: readonly string[], timeoutMs = 300_000): Promise<NodeView[]> {
  const ids = new Set(nodeIds);
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

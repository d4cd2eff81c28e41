import { ApproveCsrDocument, CsrsDocument, DenyCsrDocument } from '@ccos/shared/api-schema';
import { type CommandContext, type CommandSpec, clusterListCommand, printJson, resolveCluster, stringFlag, usageError } from './command';
import { CliError, EXIT } from './exit-codes';

export const CSRS_LIST = clusterListCommand({
  options: { pending: { type: 'boolean' } },
  fetch: async (context, clusterId) => (await context.api().request(CsrsDocument, { clusterId, pendingOnly: context.flags['pending'] === true })).csrs,
  columns: ['NAME', 'REQUESTER', 'NODE', 'STATUS', 'VERDICT', 'AGE'],
  row: (csr) => [csr.name, csr.requester.username, csr.node?.hostname ?? csr.verdict.node ?? '', csr.status, csr.verdict.decision, `${csr.ageSeconds}s`],
});

function csrName(context: CommandContext): string {
  const name = context.positionals[0];
  if (!name) {
    throw usageError(context.t, context.t('missingArgument', { what: 'NAME' }));
  }
  return name;
}

/** The API answers an unknown CSR name with NOT_FOUND or a plain refusal; both are exit 4 here. */
async function ensureExists(context: CommandContext, clusterId: string, clusterName: string, name: string): Promise<void> {
  const { csrs } = await context.api().request(CsrsDocument, { clusterId, pendingOnly: false });
  if (!csrs.some((csr) => csr.name === name)) {
    throw new CliError(context.t('csrNotFound', { name, cluster: clusterName }), EXIT.notFound);
  }
}

export const CSRS_APPROVE: CommandSpec = {
  options: { cluster: { type: 'string' }, force: { type: 'boolean' }, reason: { type: 'string' } },
  positionals: ['NAME'],
  async run(context) {
    const name = csrName(context);
    const force = context.flags['force'] === true;
    const reason = stringFlag(context, 'reason');
    if (force && !reason) {
      throw usageError(context.t, context.t('missingArgument', { what: '--reason' }));
    }
    const cluster = await resolveCluster(context);
    await ensureExists(context, cluster.id, cluster.name, name);
    const { approveCsr } = await context.api().request(ApproveCsrDocument, { clusterId: cluster.id, name, force, reason: reason ?? null });
    if (context.output !== 'table') {
      printJson(context, approveCsr);
    } else {
      context.io.out(context.t('csrApproved', { name }));
    }
    return EXIT.ok;
  },
};

export const CSRS_DENY: CommandSpec = {
  options: { cluster: { type: 'string' }, reason: { type: 'string' } },
  positionals: ['NAME'],
  async run(context) {
    const name = csrName(context);
    const reason = stringFlag(context, 'reason');
    if (!reason) {
      throw usageError(context.t, context.t('missingArgument', { what: '--reason' }));
    }
    const cluster = await resolveCluster(context);
    await ensureExists(context, cluster.id, cluster.name, name);
    const { denyCsr } = await context.api().request(DenyCsrDocument, { clusterId: cluster.id, name, reason });
    if (context.output !== 'table') {
      printJson(context, denyCsr);
    } else {
      context.io.out(context.t('csrDenied', { name }));
    }
    return EXIT.ok;
  },
};

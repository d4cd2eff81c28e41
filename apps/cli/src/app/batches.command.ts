import { type BatchFieldsFragment, BatchDocument, BatchesDocument, RetryFailedDocument } from '@ccos/shared/api-schema';
import { type CommandContext, type CommandSpec, clusterListCommand, printJson, resolveCluster, usageError } from './command';
import { CliError, EXIT } from './exit-codes';
import { columnTitles, serverText } from './messages';
import { table } from './output';

/** `batches list`: the cluster's latest batches (the console's Batches page), newest first. */
export const BATCHES_LIST = clusterListCommand({
  fetch: async (context, clusterId) => (await context.api().request(BatchesDocument, { clusterId })).batches,
  columns: ['ID', 'STATUS', 'HOSTS', 'JOINED', 'FAILED', 'REQUESTER', 'AT'],
  row: (batch) => [batch.id, batch.state, batch.progress.total, batch.progress.joined, batch.progress.failed, batch.createdBy, batch.createdAt],
});

/** `batches show BATCH`: where each host of a batch is (the console's batch page), and why a failed one failed. */
export const BATCHES_SHOW: CommandSpec = {
  options: { cluster: { type: 'string' } },
  positionals: ['BATCH'],
  async run(context) {
    const batch = await resolveBatch(context);
    if (context.output !== 'table') {
      printJson(context, batch);
    } else {
      printBatch(context, batch);
    }
    return EXIT.ok;
  },
};

/** `batches retry BATCH`: installs the batch's failed hosts again, each resuming at its failed step. */
export const BATCHES_RETRY: CommandSpec = {
  options: { cluster: { type: 'string' } },
  positionals: ['BATCH'],
  async run(context) {
    const batch = await resolveBatch(context);
    const { retryFailed } = await context.api().request(RetryFailedDocument, { batchId: batch.id });
    if (context.output !== 'table') {
      printJson(context, retryFailed);
      return EXIT.ok;
    }
    context.io.out(context.t('batchRetried', { id: batch.id, count: batch.progress.failed }));
    printBatch(context, retryFailed);
    return EXIT.ok;
  },
};

function printBatch(context: CommandContext, batch: BatchFieldsFragment): void {
  const { progress } = batch;
  context.io.out(
    context.t('batchSummary', {
      id: batch.id,
      state: batch.state,
      total: progress.total,
      joined: progress.joined,
      installing: progress.installing,
      queued: progress.queued,
      failed: progress.failed,
      cancelled: progress.cancelled,
      waiting: progress.waitingForOperator,
    }),
  );
  const c = columnTitles(context.language);
  context.io.out(
    table(
      [c['HOSTNAME'], c['IP'], c['PHASE'], c['STATUS'], c['STEP'], c['REASON']].map(String),
      [...batch.hosts]
        .sort((left, right) => left.position - right.position)
        .map((host) => [host.hostname, host.ip, host.phase, host.status ?? '', host.step ?? '', serverText(context.language, host.statusReason, host.statusReasonCode, host.statusReasonParams)]),
    ),
  );
}

/** The batch named by its id, or by the start of its id among the cluster's latest batches. */
async function resolveBatch(context: CommandContext): Promise<BatchFieldsFragment> {
  const wanted = context.positionals[0];
  if (!wanted) {
    throw usageError(context.t, context.t('missingArgument', { what: 'BATCH' }));
  }
  const cluster = await resolveCluster(context);
  const { batches } = await context.api().request(BatchesDocument, { clusterId: cluster.id });
  const exact = batches.find((batch) => batch.id === wanted);
  const matching = exact ? [exact] : batches.filter((batch) => batch.id.startsWith(wanted.toLowerCase()));
  if (matching.length > 1) {
    throw usageError(context.t, context.t('batchAmbiguous', { batch: wanted, ids: matching.map((batch) => batch.id).join(', ') }));
  }
  const [found] = matching;
  if (!found) {
    throw new CliError(context.t('batchNotFound', { batch: wanted, cluster: cluster.name }), EXIT.notFound);
  }
  return (await context.api().request(BatchDocument, { id: found.id })).batch;
}

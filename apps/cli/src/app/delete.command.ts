import { DeleteNodeRecordDocument } from '@ccos/shared/api-schema';
import { confirmedNodeCommand } from './command';

/**
 * `nodes delete NODE`: forgets a node that never joined (a failed add or install) or was removed,
 * with the console's deleteNodeRecord; the API decides which nodes may go and who may ask
 * (OPERATOR). Like the console it asks first: the host name typed on a terminal, or --yes.
 */
export const NODES_DELETE = confirmedNodeCommand(
  { prompt: 'deleteConfirmPrompt', needed: 'deleteConfirmNeeded', aborted: 'deleteAborted' },
  async (context, node) => (await context.api().request(DeleteNodeRecordDocument, { nodeId: node.id })).deleteNodeRecord,
  (context, deleted) => context.t('nodeDeleted', { hostname: deleted.hostname, id: deleted.id }),
);

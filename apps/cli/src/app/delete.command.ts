import { DeleteNodeRecordDocument } from '@ccos/shared/api-schema';
import { type CommandSpec, confirmedByHostname, nodeArgument, printJson, resolveNode } from './command';
import { EXIT } from './exit-codes';

/**
 * `nodes delete NODE`: forgets a node that never joined (a failed add or install) or was removed,
 * with the console's deleteNodeRecord; the API decides which nodes may go and who may ask
 * (OPERATOR). Like the console it asks first: the host name typed on a terminal, or --yes.
 */
export const NODES_DELETE: CommandSpec = {
  options: { cluster: { type: 'string' }, yes: { type: 'boolean' } },
  positionals: ['NODE'],
  async run(context) {
    const { t } = context;
    const node = await resolveNode(context, nodeArgument(context));
    if (!(await confirmedByHostname(context, node.hostname, { prompt: 'deleteConfirmPrompt', needed: 'deleteConfirmNeeded', aborted: 'deleteAborted' }))) {
      return EXIT.failed;
    }
    const { deleteNodeRecord } = await context.api().request(DeleteNodeRecordDocument, { nodeId: node.id });
    if (context.output !== 'table') {
      printJson(context, deleteNodeRecord);
    } else {
      context.io.out(t('nodeDeleted', { hostname: deleteNodeRecord.hostname, id: deleteNodeRecord.id }));
    }
    return EXIT.ok;
  },
};

import { CleanHostDocument } from '@ccos/shared/api-schema';
import { confirmedNodeCommand } from './command';

/**
 * `nodes clean NODE`: removes what an earlier membership left on a host, exactly the items its
 * add-time check listed (files, the kubelet service, its old Node, its pending CSRs), as the
 * console's "Clean host" does; the host can then be installed. The API decides whether there is
 * anything to clean and who may ask (OPERATOR). It changes the host, so it asks first: the host
 * name typed on a terminal, or --yes.
 */
export const NODES_CLEAN = confirmedNodeCommand(
  { prompt: 'cleanConfirmPrompt', needed: 'cleanConfirmNeeded', aborted: 'cleanAborted' },
  async (context, node) => (await context.api().request(CleanHostDocument, { nodeId: node.id })).cleanHost,
  (context, cleaned) => context.t('hostCleaned', { hostname: cleaned.hostname, count: cleaned.hostVerdict?.leftovers.length ?? 0 }),
);

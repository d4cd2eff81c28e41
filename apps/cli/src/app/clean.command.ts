import { CleanHostDocument } from '@ccos/shared/api-schema';
import { type CommandSpec, confirmedByHostname, nodeArgument, printJson, resolveNode } from './command';
import { EXIT } from './exit-codes';

/**
 * `nodes clean NODE`: removes what an earlier membership left on a host, exactly the items its
 * add-time check listed (files, the kubelet service, its old Node, its pending CSRs), as the
 * console's "Clean host" does; the host can then be installed. The API decides whether there is
 * anything to clean and who may ask (OPERATOR). It changes the host, so it asks first: the host
 * name typed on a terminal, or --yes.
 */
export const NODES_CLEAN: CommandSpec = {
  options: { cluster: { type: 'string' }, yes: { type: 'boolean' } },
  positionals: ['NODE'],
  async run(context) {
    const { t } = context;
    const node = await resolveNode(context, nodeArgument(context));
    if (!(await confirmedByHostname(context, node.hostname, { prompt: 'cleanConfirmPrompt', needed: 'cleanConfirmNeeded', aborted: 'cleanAborted' }))) {
      return EXIT.failed;
    }
    const { cleanHost } = await context.api().request(CleanHostDocument, { nodeId: node.id });
    if (context.output !== 'table') {
      printJson(context, cleanHost);
    } else {
      context.io.out(t('hostCleaned', { hostname: cleanHost.hostname, count: cleanHost.hostVerdict?.leftovers.length ?? 0 }));
    }
    return EXIT.ok;
  },
};

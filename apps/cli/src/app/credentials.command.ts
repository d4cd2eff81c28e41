import { UpdateNodeCredentialsDocument } from '@ccos/shared/api-schema';
import { type CommandSpec, nodeArgument, printJson, resolveNode, sshSecretsFrom, stringFlag } from './command';
import { EXIT } from './exit-codes';
import { serverText } from './messages';
import { waitUntilChecked } from './nodes.command';

/**
 * `nodes credentials NODE`: new SSH credentials for a node (the console's updateNodeCredentials),
 * after which the service connects again. The SSH user stays the node's unless --user names
 * another. The secret comes from a file or standard input and is never printed; --wait follows
 * the node until the new connection settles.
 */
export const NODES_CREDENTIALS: CommandSpec = {
  options: {
    cluster: { type: 'string' },
    user: { type: 'string' },
    'password-file': { type: 'string' },
    'password-stdin': { type: 'boolean' },
    'private-key-file': { type: 'string' },
    'passphrase-file': { type: 'string' },
    wait: { type: 'boolean' },
  },
  positionals: ['NODE'],
  async run(context) {
    const { t } = context;
    const name = nodeArgument(context);
    const secrets = await sshSecretsFrom(context);
    const node = await resolveNode(context, name);
    const sshUser = stringFlag(context, 'user') ?? node.sshUser ?? 'root';
    const { updateNodeCredentials } = await context.api().request(UpdateNodeCredentialsDocument, { nodeId: node.id, input: { sshUser, ...secrets } });
    const [settled = updateNodeCredentials] = context.flags['wait'] ? await waitUntilChecked(context, updateNodeCredentials.clusterId, [updateNodeCredentials.id]) : [updateNodeCredentials];
    if (context.output !== 'table') {
      printJson(context, settled);
    } else {
      context.io.out(t('credentialsUpdated', { hostname: settled.hostname, user: sshUser, status: settled.status }));
      if (context.flags['wait']) {
        context.io.out(t('nodeSettled', { hostname: settled.hostname, status: settled.status, reason: settled.statusReason ? ` (${serverText(context.language, settled.statusReason, settled.statusReasonCode, settled.statusReasonParams)})` : '' }));
      }
    }
    return settled.status === 'ADDING' || settled.status === 'READY_TO_INSTALL' ? EXIT.ok : EXIT.failed;
  },
};

import { NodeGroupsDocument } from '@ccos/shared/api-schema';
import { type CommandSpec, printJson, resolveCluster } from './command';
import { EXIT } from './exit-codes';
import { columnTitles, serverText } from './messages';
import { table } from './output';

/**
 * `pools list`: the cluster's node groups (the console's Pools page): their bounds, the size the
 * autoscaler asked for, the size they have, their spares, and each host with its state and why.
 */
export const POOLS_LIST: CommandSpec = {
  options: { cluster: { type: 'string' } },
  positionals: [],
  async run(context) {
    const cluster = await resolveCluster(context);
    const { nodeGroups } = await context.api().request(NodeGroupsDocument, { clusterId: cluster.id });
    if (context.output !== 'table') {
      printJson(context, nodeGroups);
      return EXIT.ok;
    }
    const c = columnTitles(context.language);
    context.io.out(
      table(
        [c['NAME'], c['MIN'], c['MAX'], c['DESIRED'], c['CURRENT'], c['SPARES']].map(String),
        nodeGroups.map((group) => [group.name, group.minSize, group.maxSize, group.targetSize, group.currentSize, group.spares]),
      ),
    );
    const hosts = nodeGroups.flatMap((group) => group.hosts.map((host) => [group.name, host.hostname, host.ip, host.state, serverText(context.language, host.reason, host.reasonCode, host.reasonParams)]));
    if (hosts.length > 0) {
      context.io.out('');
      context.io.out(table([c['NAME'], c['HOSTNAME'], c['IP'], c['STATUS'], c['REASON']].map(String), hosts));
    }
    return EXIT.ok;
  },
};

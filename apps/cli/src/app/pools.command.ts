import { NodeGroupsDocument } from '@ccos/shared/api-schema';
import { clusterListCommand } from './command';
import { columnTitles, serverText } from './messages';
import { table } from './output';

/**
 * `pools list`: the cluster's node groups (the console's Pools page): their bounds, the size the
 * autoscaler asked for, the size they have, their spares, and each host with its state and why.
 */
export const POOLS_LIST = clusterListCommand({
  fetch: async (context, clusterId) => (await context.api().request(NodeGroupsDocument, { clusterId })).nodeGroups,
  columns: ['NAME', 'MIN', 'MAX', 'DESIRED', 'CURRENT', 'SPARES'],
  row: (group) => [group.name, group.minSize, group.maxSize, group.targetSize, group.currentSize, group.spares],
  after(context, nodeGroups) {
    const hosts = nodeGroups.flatMap((group) => group.hosts.map((host) => [group.name, host.hostname, host.ip, host.state, serverText(context.language, host.reason, host.reasonCode, host.reasonParams)]));
    if (hosts.length > 0) {
      const c = columnTitles(context.language);
      context.io.out('');
      context.io.out(table([c['NAME'], c['HOSTNAME'], c['IP'], c['STATUS'], c['REASON']].map(String), hosts));
    }
  },
});

import { ClustersDocument } from '@ccos/shared/api-schema';
import { type CommandSpec, printJson } from './command';
import { EXIT } from './exit-codes';
import { columnTitles } from './messages';
import { table } from './output';

export const CLUSTERS_LIST: CommandSpec = {
  options: {},
  positionals: [],
  async run(context) {
    const { clusters } = await context.api().request(ClustersDocument, {});
    if (context.output !== 'table') {
      printJson(context, clusters);
      return EXIT.ok;
    }
    const c = columnTitles(context.language);
    context.io.out(
      table(
        [c['ID'], c['NAME'], c['API SERVER'], c['VIP'], c['AUTO-APPROVE']].map(String),
        clusters.map((cluster) => [cluster.id, cluster.name, cluster.apiServerUrl, cluster.vip, cluster.csrAutoApprove]),
      ),
    );
    return EXIT.ok;
  },
};

import { ClusterBootstrapManifestDocument, ClusterChecksDocument, ClustersDocument, SetClusterInstallsAtOnceDocument } from '@ccos/shared/api-schema';
import { type CommandSpec, integerFlag, printJson, resolveCluster, usageError } from './command';
import { EXIT } from './exit-codes';
import { columnTitles, serverText } from './messages';
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
        [c['ID'], c['NAME'], c['API SERVER'], c['VIP'], c['AUTO-APPROVE'], c['INSTALLS AT ONCE']].map(String),
        clusters.map((cluster) => [cluster.id, cluster.name, cluster.apiServerUrl, cluster.vip, cluster.csrAutoApprove, cluster.installsAtOnce]),
      ),
    );
    return EXIT.ok;
  },
};

/** Each readiness check with ✓ or ✗, its reason, and for a failed one the exact fix; exit 1 when one failed. */
export const CLUSTERS_CHECK: CommandSpec = {
  options: { cluster: { type: 'string' } },
  positionals: [],
  async run(context) {
    const cluster = await resolveCluster(context);
    const { clusterChecks } = await context.api().request(ClusterChecksDocument, { clusterId: cluster.id });
    const failed = clusterChecks.filter((check) => !check.ok).length;
    if (context.output !== 'table') {
      printJson(context, clusterChecks);
      return failed === 0 ? EXIT.ok : EXIT.failed;
    }
    const { t } = context;
    for (const check of clusterChecks) {
      context.io.out(`${check.ok ? '✓' : '✗'} ${check.name}: ${serverText(context.language, check.reason, check.reasonCode, check.reasonParams)}`);
      if (check.fix) {
        context.io.out(t('checkFix'));
        context.io.out(check.fix.trimEnd().replace(/^/gm, '      '));
      }
    }
    if (failed === 0) {
      context.io.out(t('clusterReady', { cluster: cluster.name }));
      return EXIT.ok;
    }
    context.io.err(t('clusterNotReady', { cluster: cluster.name, failed }));
    return EXIT.failed;
  },
};

/** The manifest the cluster needs for installs, as it is: for `kubectl apply -f -`. */
export const CLUSTERS_PREPARE: CommandSpec = {
  options: { cluster: { type: 'string' } },
  positionals: [],
  async run(context) {
    const cluster = await resolveCluster(context);
    const { clusterBootstrapManifest } = await context.api().request(ClusterBootstrapManifestDocument, { clusterId: cluster.id });
    if (context.output !== 'table') {
      printJson(context, { cluster: cluster.name, manifest: clusterBootstrapManifest });
    } else {
      context.io.out(clusterBootstrapManifest.trimEnd());
    }
    return EXIT.ok;
  },
};

/** Sets how many installs run at once on the cluster; the API refuses a number outside 1–1000 and says so. */
export const CLUSTERS_LIMIT: CommandSpec = {
  options: { cluster: { type: 'string' }, 'installs-at-once': { type: 'string' } },
  positionals: [],
  async run(context) {
    const limit = integerFlag(context, 'installs-at-once');
    if (limit === undefined) {
      throw usageError(context.t, context.t('installsAtOnceMissing'));
    }
    const cluster = await resolveCluster(context);
    const { setClusterInstallsAtOnce } = await context.api().request(SetClusterInstallsAtOnceDocument, { clusterId: cluster.id, limit });
    if (context.output !== 'table') {
      printJson(context, setClusterInstallsAtOnce);
    } else {
      context.io.out(context.t('installsAtOnceSet', { cluster: setClusterInstallsAtOnce.name, limit: setClusterInstallsAtOnce.installsAtOnce }));
    }
    return EXIT.ok;
  },
};

import type { DestinationStream, Logger } from 'pino';
import { DEFAULT_REMOVAL_OPTIONS } from '@ccos/shared/domain';
import { AuditLog, type Database, createStores, databaseReachable, openDatabase, redactUrl, startEmbeddedDatabase } from '@ccos/api/data-access-db';
import { ClusterAddressGuard, readClusterVersion } from '@ccos/api/data-access-kube';
import { SshPool } from '@ccos/api/data-access-ssh';
import { ArtifactSetStore, ClusterArtifacts, artifactRoutes, artifactUploadRoutes } from '@ccos/api/feature-artifacts';
import { createAutoscalingFeature } from '@ccos/api/feature-autoscaling';
import { LoginThrottle, PasswordCheckSlots, DEFAULT_PASSWORD_CHECK_LIMITS, SessionService, SessionTokens, UserService } from '@ccos/api/feature-auth';
import { ClusterService } from '@ccos/api/feature-clusters';
import { announceClusterSettingsChanged, createCsrFeature } from '@ccos/api/feature-csrs';
import {
  AgentReportService,
  BatchInstaller,
  InstallRunSweeper,
  NodeBatchService,
  HostCleanupService,
  InstallRunView,
  InstallGauges,
  InstallService,
  RunBootstrapIdentities,
  NodeProvisioner,
  NodeService,
  SshAgentControl,
  NodeInventorySync,
  StallWatchdog,
  diagnosticsRoutes,
  loadAgentBinary,
  sshTargetOf,
} from '@ccos/api/feature-nodes';
import { RemovalGauges, createRemovalFeature } from '@ccos/api/feature-removals';
import { type EventBus, bearerToken, createInProcessEventBus, createPostgresEventBus, nodeChangePublisher } from '@ccos/api/util-graphql';
import { SecretBox } from '@ccos/api/util-secrets';
import type { ApiConfig } from './config';
import { startHttpServer } from './http-server';
import { createLogger } from './logger';
import { ApiMetrics } from './metrics';
import { clusterLeftoverCleaner, clusterProbeFrom } from './cluster-probe';
import { requestOrigins } from './request-origin';
import { buildApiSchema } from './schema';
import { autoscalerConnections, autoscalerServerCredentials } from './autoscaler-grpc';
import { loadOrCreateServiceCa } from './tls/service-ca.store';
import { ServiceTls } from './tls/service-tls';
import { serverNames } from './tls/server-names';

export interface RunningApi {
  /** Plain HTTP (people, local tools). */
  readonly url: string;
  /** The same port over TLS (agents, and anyone who trusts the CA). */
  readonly httpsUrl: string;
  /** The certificate served now and what agents pin. */
  readonly tls: ServiceTls;
  readonly port: number;
  readonly dataSource: Database;
  readonly logger: Logger;
  close(): Promise<void>;
}

export interface StartOptions {
  /** Where log lines go (tests capture them); stdout by default. */
  readonly logDestination?: DestinationStream;
  /** Called once with a generated admin password, on the very first start only. */
  readonly onGeneratedAdminPassword?: (password: string) => void;
}

/** The composition root: database, services, schema, then the HTTP server. */
export async function startApi(config: ApiConfig, options: StartOptions = {}): Promise<RunningApi> {
  const logger = createLogger(config.logLevel, options.logDestination);
  const stack: Array<{ name: string; stop: () => Promise<void> }> = [];
  const close = async () => {
    for (const { name, stop } of stack.reverse()) {
      logger.debug({ component: name }, 'stopping');
      await stop().catch((error: unknown) => logger.warn({ err: error, component: name }, 'error while shutting down'));
    }
  };
  try {
    let databaseUrl = config.databaseUrl;
    if (!databaseUrl) {
      const embedded = await startEmbeddedDatabase(config.dataDir);
      stack.push({ name: 'embedded database', stop: () => embedded.stop() });
      databaseUrl = embedded.url;
      logger.info({ dataDir: config.dataDir }, 'using the embedded database (single process); set DATABASE_URL for a Postgres server');
    }
    const dataSource = await openDatabase({ url: databaseUrl, maxConnections: config.databaseUrl ? 10 : 1 });
    stack.push({ name: 'database connections', stop: () => dataSource.destroy() });
    logger.info({ database: redactUrl(databaseUrl) }, 'database ready, migrations applied');

    const events: EventBus = config.databaseUrl ? await createPostgresEventBus(config.databaseUrl, logger) : createInProcessEventBus();
    stack.push({ name: 'event bus', stop: () => events.close() });
    const stores = createStores(dataSource, { onNodeChanged: nodeChangePublisher(events) });

    const secrets = new SecretBox(config.secretKey);
    const tls = config.tls
      ? await ServiceTls.fromFiles(config.tls, logger)
      : await ServiceTls.generated(await loadOrCreateServiceCa(stores.serviceCas, secrets), serverNames(config), logger);
    stack.push({ name: 'TLS certificate', stop: async () => tls.close() });
    if (config.agentPlainHttp) {
      logger.warn('AGENT_PLAIN_HTTP=allow: agents may reach the service over plain HTTP, where their run token and the service\'s answers are unprotected');
    }
    const audit = new AuditLog(dataSource, logger);
    const clusterNames = new Map<string, string>();
    // A cluster's name never changes once registered: read it once per process (the id stands in, uncached, when it cannot be read).
    const clusterName = async (clusterId: string) => {
      const known = clusterNames.get(clusterId);
      if (known !== undefined) {
        return known;
      }
      const name = await clusters.get(clusterId).then((cluster) => cluster.name, () => null);
      if (name === null) {
        return clusterId;
      }
      clusterNames.set(clusterId, name);
      return name;
    };
    const metrics = new ApiMetrics(clusterName);
    const sessions = new SessionService(stores.sessions, new SessionTokens(secrets.deriveKey('session tokens'), config.sessionTtlSeconds), events);
    const stopFollowingSessions = sessions.follow((error) => logger.error({ err: error }, 'stopped following ended sessions'));
    stack.push({ name: 'session cache', stop: async () => stopFollowingSessions() });
    const slots = new PasswordCheckSlots({ ...DEFAULT_PASSWORD_CHECK_LIMITS, concurrent: config.passwordChecksAtOnce, queued: 8 * config.passwordChecksAtOnce, perAddress: 2 * config.passwordChecksAtOnce });
    metrics.followPasswordChecks(() => slots.stats);
    const users = new UserService(stores.users, { sessions, throttle: new LoginThrottle(stores.loginLimits), slots, onLogin: (outcome) => metrics.loginAttempts.inc({ outcome }) });
    const clusters = new ClusterService(stores.clusters, secrets, (cluster) => announceClusterSettingsChanged(events, cluster.id), new ClusterAddressGuard(config.clusterAddresses));
    if (config.clusterAddresses.ranges.length > 0 || config.clusterAddresses.networks.length > 0) {
      logger.warn({ allowed: [...config.clusterAddresses.ranges, ...config.clusterAddresses.networks] }, 'ALLOW_CLUSTER_ADDRESSES: cluster API servers may be at these otherwise refused addresses');
    }
    const certificates = createCsrFeature({
      decisions: stores.csrDecisions,
      inventory: stores.csrInventory,
      notices: stores.installRunNotices,
      clusters,
      events,
      logger,
      audit,
      policy: { approvalWindowMs: config.csrApprovalWindowMinutes * 60_000 },
      onDecision: metrics.domain.csrDecisionObserver,
      approver: {
        leaseNamespace: config.csrApproverLeaseNamespace,
        onImpostorDenied: (event) => void clusterName(event.clusterId).then((cluster) => metrics.impostorCsrs.inc({ cluster })),
      },
    });

    const admin = await users.ensureInitialAdmin(config.adminPassword);
    if (admin?.generatedPassword) {
      (options.onGeneratedAdminPassword ?? printGeneratedPassword)(admin.generatedPassword);
    }

    metrics.followCertificates(() => certificates.nodeCertificates.all());
    await certificates.start();
    stack.push({ name: 'CSR watches and auto-approver', stop: () => certificates.stop() });

    const agentBinary = await loadAgentBinary(config.agentBinary, {
      onCompressFailed: (reason) => logger.warn({ reason }, 'the agent is copied uncompressed over SFTP: its zstd form cannot be made (install zstd on this machine)'),
    });
    if (!agentBinary) {
      logger.warn({ path: config.agentBinary }, 'no agent executable: nodes cannot be added until it is built (npm run build) or AGENT_BINARY points at it');
    }
    metrics.followAgentCopies(() => agentBinary?.copies ?? null);
    const nodeStore = stores.nodes;
    const agentTokens = stores.agentTokens;
    const sshPool = new SshPool({ maxSessions: config.sshPoolSize, connect: { connectTimeoutMs: config.sshConnectTimeoutMs } });
    stack.push({ name: 'SSH sessions', stop: () => sshPool.close() });
    const provisioner = new NodeProvisioner(nodeStore, secrets, sshPool, () => agentBinary, logger, clusterProbeFrom(certificates));
    const nodes = new NodeService(dataSource, nodeStore, secrets, provisioner, () => agentBinary);
    let listeningPort = config.port;
    const artifactSets = new ArtifactSetStore(config.artifactsDir);
    const clusterArtifacts = new ClusterArtifacts({
      store: artifactSets,
      override: async (clusterId) => (await clusters.get(clusterId)).artifactVersion,
      detect: async (clusterId) => readClusterVersion((await certificates.watches.ensure(clusterId)).client, AbortSignal.timeout(10_000)),
    });
    const agentControl = new SshAgentControl(sshPool, secrets, () => agentBinary, {
      agentApiUrl: config.agentApiUrl,
      serviceTls: (apiUrl) => tls.agentPin(apiUrl),
      artifactManifestSha256: async (clusterId) => (await (await clusterArtifacts.catalogFor(clusterId)).manifestDocument()).sha256,
      servicePort: () => listeningPort,
      vip: async (clusterId) => (await clusters.get(clusterId)).vip,
      machineConfigCaCert: async (clusterId) => (await clusters.get(clusterId)).machineConfigCaCert,
      requirements: config.hostRequirements,
      nodeReadyTimeoutSeconds: config.nodeReadyTimeoutSeconds,
    });
    const identities = new RunBootstrapIdentities(dataSource, { clientFor: async (clusterId) => (await certificates.watches.ensure(clusterId)).client }, config.bootstrapNamespace, logger);
    const artifactsReady = async (clusterId: string) => void (await clusterArtifacts.requireComplete(clusterId));
    const installs = new InstallService(dataSource, nodeStore, agentTokens, agentControl, identities, events, logger, config.installRunDeadlineMinutes * 60_000, metrics.domain.installObserver, {}, artifactsReady);
    const agentReports = new AgentReportService(dataSource, agentTokens, nodeStore, installs, clusterProbeFrom(certificates), events, logger, metrics.domain.installObserver);
    const batchInstaller = new BatchInstaller(dataSource, nodeStore, installs, events, logger);
    const batches = new NodeBatchService(dataSource, nodeStore, secrets, provisioner, () => agentBinary, batchInstaller, Math.min(config.batchConcurrency, config.sshPoolSize), artifactsReady);
    const hostCleanup = new HostCleanupService(nodeStore, secrets, sshPool, clusterLeftoverCleaner(certificates), logger);
    const watchdog = new StallWatchdog(dataSource, nodeStore, config.stallAfterSeconds, logger);
    const inventorySync = new NodeInventorySync(nodeStore, certificates.watches, clusters, logger);
    await inventorySync.start();
    stack.push({ name: 'node inventory sync', stop: () => inventorySync.stop() });
    const removals = createRemovalFeature({
      runs: stores.removalRuns,
      nodes: nodeStore,
      tokens: agentTokens,
      clusters: certificates.watches,
      csrs: certificates.service,
      hosts: (node) => (node.sshCredentialsSealed ? sshTargetOf(node, secrets) : null),
      ssh: sshPool,
      events,
      logger,
      runner: { observer: metrics.domain.removalObserver },
    });
    const autoscaling = createAutoscalingFeature({
      nodeGroups: stores.nodeGroups,
      clusters: stores.clusters,
      nodes: nodeStore,
      audit,
      events,
      logger,
      observer: metrics.domain.autoscalingObserver,
      ports: {
        addNode: async (host) => (await nodes.add({ ...host, labels: [...host.labels], taints: [...host.taints] })).id,
        checkHost: (nodeId) => provisioner.schedule(nodeId),
        cleanLeftovers: async (nodeId, actor) => {
          await hostCleanup.clean(nodeId, actor);
        },
        installAsBatch: async (clusterId, nodeIds, actor) => (await batches.installHosts(clusterId, nodeIds, actor)).id,
        // cluster-autoscaler has cordoned and drained already; the run drains what is left (DaemonSet pods stay, like the autoscaler leaves them) and cleans the host.
        startRemoval: async (nodeId, actor) =>
          (await removals.service.start(nodeId, { ...DEFAULT_REMOVAL_OPTIONS, ignoreDaemonSets: true, deleteEmptyDirData: true, allowLastWorker: true, timeoutSeconds: 600, cleanHost: true }, actor)).id,
        removalOutcome: async (runId) => {
          await removals.runner.settled(runId);
          const run = await removals.service.run(runId);
          return { status: run.status, reason: run.reason };
        },
      },
      grpc: config.autoscalerGrpc ? () => autoscalerServerCredentials(stores.serviceCas, secrets, config) : null,
    });
    metrics.domain.follow({
      installs: new InstallGauges(dataSource),
      removals: new RemovalGauges(stores.removalRuns),
      pendingCsrs: () => certificates.watches.pendingCsrs(),
      approverLeadership: () => certificates.autoApprover.leadership(),
      blockedDrains: () => removals.runner.blockedDrains(),
      ssh: () => sshPool.stats,
      approvalWindowSeconds: config.csrApprovalWindowMinutes * 60,
    });

    const schema = await buildApiSchema({
      users,
      sessions,
      clusters,
      csrs: certificates.service,
      nodeCertificates: certificates.nodeCertificates,
      nodes,
      batches,
      hostCleanup,
      installs,
      installRunView: new InstallRunView(dataSource),
      agentReports,
      removals: removals.service,
      clusterArtifacts,
      artifactVersionOverrides: { set: (clusterId, version) => clusters.setArtifactVersion(clusterId, version).then(() => undefined) },
      nodeGroups: autoscaling.groups,
      autoscalerConnections: autoscalerConnections(stores.serviceCas, secrets, config, () => autoscaling.grpcPort()),
      audit,
      events,
      agentChannel: { plainHttpAllowed: config.agentPlainHttp, certificateSource: tls.source, caCertificates: () => tls.caCertificates() },
    });
    const sessionUser = async (header: string | undefined) => {
      const token = bearerToken(header);
      return token ? users.authenticate(token) : null;
    };
    const http = await startHttpServer({
      port: config.port,
      host: config.host,
      consoleDir: config.consoleDir,
      graphiqlDir: config.graphiqlDir,
      maxRequestBytes: config.maxRequestBytes,
      schema,
      logger,
      metrics,
      authenticate: (token) => users.authenticate(token),
      origin: requestOrigins(config.trustedProxies, logger),
      ready: () => databaseReachable(dataSource),
      events,
      certificate: tls,
      agentPlainHttp: config.agentPlainHttp,
      routes: (app) => {
        // An agent downloads its run's cluster's set; a signed-in user looking around, the default one.
        app.use(
          '/artifacts',
          artifactRoutes(async (header) => {
            const run = await agentTokens.authenticate(bearerToken(header));
            if (run) {
              return clusterArtifacts.catalogFor((await nodeStore.get(run.nodeId)).clusterId);
            }
            return (await sessionUser(header)) ? artifactSets.defaultCatalog : null;
          }),
        );
        app.use(artifactUploadRoutes({
          store: artifactSets,
          uploader: sessionUser,
          maxBytes: config.artifactUploadMaxBytes,
          onImport: (event) => void audit.record({
            actor: event.username, action: 'importArtifactSet', targetType: 'ArtifactSet', targetId: event.version, result: event.outcome === 'IMPORTED' ? 'SUCCESS' : 'FAILURE', detail: { detail: event.detail }, requestId: null,
          }),
        }));
        app.use(diagnosticsRoutes(dataSource, agentTokens, async (header) => (await sessionUser(header))?.role ?? null, (run) => installs.publishRun(run)));
      },
    });
    stack.push({ name: 'HTTP server', stop: () => http.close() });
    listeningPort = http.port;
    watchdog.start();
    stack.push({ name: 'stall watchdog', stop: async () => watchdog.stop() });
    // Also ends what ended while the service was down: overdue runs, identities of ended runs.
    const sweeper = new InstallRunSweeper(dataSource, nodeStore, installs, agentControl, identities, logger);
    await sweeper.start();
    stack.push({ name: 'install run sweeper', stop: () => sweeper.stop() });
    const resumed = await provisioner.resumePending();
    if (resumed > 0) {
      logger.info({ nodes: resumed }, 'resumed adding nodes interrupted by a restart');
    }
    const resumedBatches = await batchInstaller.start();
    stack.push({ name: 'batch installs', stop: () => batchInstaller.stop() });
    if (resumedBatches > 0) {
      logger.info({ batches: resumedBatches }, 'resumed batch installs interrupted by a restart');
    }
    const resumedRemovals = await removals.start();
    stack.push({ name: 'removal runs', stop: () => removals.stop() });
    if (resumedRemovals > 0) {
      logger.info({ runs: resumedRemovals }, 'resumed removal runs interrupted by a restart');
    }
    await autoscaling.start();
    stack.push({ name: 'node groups and the externalgrpc provider', stop: () => autoscaling.stop() });
    logger.info({ url: http.url, httpsUrl: http.httpsUrl, certificateSource: tls.source, agentPlainHttp: config.agentPlainHttp }, 'ccos-scaler API listening (HTTPS and plain HTTP on one port)');
    return { url: http.url, httpsUrl: http.httpsUrl, tls, port: http.port, dataSource, logger, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Shown once, on the first start, outside the JSON log so it is not shipped to log storage. */
function printGeneratedPassword(password: string): void {
  process.stderr.write(
    `\n  First start: created user "admin" with password\n\n      ${password}\n\n  It is shown only this once. Sign in and change it, or set ADMIN_PASSWORD before the first start.\n\n`,
  );
}

import { setTimeout } from 'node:timers/promises';
import type { DestinationStream, Logger } from 'pino';
import { ClusterConnections } from '@ccos/api/data-access-cluster-connections';
import { AuditLog, type Database, JobEngine, createStores, databaseReachable, openDatabase, redactUrl, startEmbeddedDatabase } from '@ccos/api/data-access-db';
import { loadAgentBinary, sshTargetOf } from '@ccos/api/data-access-hosts';
import { ClusterAddressGuard, setManagedNodeMarks } from '@ccos/api/data-access-kube';
import { SshPool } from '@ccos/api/data-access-ssh';
import { ApprovalService } from '@ccos/api/feature-approvals';
import { createArtifactsFeature } from '@ccos/api/feature-artifacts';
import { createAuthFeature } from '@ccos/api/feature-auth';
import { createAutoscalingFeature } from '@ccos/api/feature-autoscaling';
import { createClusterFeature } from '@ccos/api/feature-clusters';
import { type CsrService, announceClusterSettingsChanged, createCsrFeature } from '@ccos/api/feature-csrs';
import { type FleetFeature, type StartRollout, createFleetFeature } from '@ccos/api/feature-fleet';
import { type InstallFeature, InstallProgress, RunNoticeBoard, createInstallFeature } from '@ccos/api/feature-installs';
import { createInventoryFeature } from '@ccos/api/feature-inventory';
import { type NodeFeature, createNodeFeature } from '@ccos/api/feature-nodes';
import { createRemediationFeature } from '@ccos/api/feature-remediation';
import { type RemovalFeature, createRemovalFeature } from '@ccos/api/feature-removals';
import { createWebhooksFeature } from '@ccos/api/feature-webhooks';
import { type EventBus, bearerToken, createInProcessEventBus, createPostgresEventBus, nodeChangePublisher } from '@ccos/api/util-graphql';
import { SecretBox } from '@ccos/api/util-secrets';
import { DEFAULT_REMOVAL_OPTIONS, NotFoundError, type RemovalOptions } from '@ccos/shared/domain';
import type { CodedText } from '@ccos/shared/messages';
import { Backoff, SystemClock } from '@ccos/shared/util-timing';
import { startAgentListener } from './agent-listener';
import { autoscalerConnections, autoscalerServerCredentials } from './autoscaler-grpc';
import { clusterLeftoverCleaner, clusterProbeFrom } from './cluster-probe';
import type { ApiConfig } from './config';
import { type Readiness, startHttpServer } from './http-server';
import { type InternalListener, startInternalListener } from './internal-listener';
import { createLogger } from './logger';
import { ApiMetrics } from './metrics';
import { requestOrigins } from './request-origin';
import { buildApiSchema } from './schema';
import { serverNames } from './tls/server-names';
import { loadOrCreateServiceCa } from './tls/service-ca.store';
import { ServiceTls } from './tls/service-tls';

export interface RunningApi {
  /** Plain HTTP (people, local tools); a worker's health, readiness and metrics (SERVICE_ROLE=worker). */
  readonly url: string;
  /** The same port over TLS (agents, unless AGENT_PORT gives them their own; anyone who trusts the CA); null for a worker, which serves no TLS. */
  readonly httpsUrl: string | null;
  /** The agents' own listener over TLS (AGENT_PORT), or null when agents use the main port. */
  readonly agentsUrl: string | null;
  /** The internal metrics listener (METRICS_PORT), or null when /metrics is on the main port. */
  readonly metricsUrl: string | null;
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

/**
 * The composition root: database, services, schema, then the HTTP server. Every role builds every
 * feature (a worker's jobs use them all); what a role starts is decided here, and only here.
 */
export async function startApi(config: ApiConfig, options: StartOptions = {}): Promise<RunningApi> {
  const logger = createLogger(config.logLevel, options.logDestination).child({ role: config.role });
  const servesApi = config.role !== 'worker';
  const runsJobs = config.role !== 'api';
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
    // Opened once the service listens (see startJobWorkers): on the embedded database graphile-worker's
    // first migration takes seconds of the thread the database shares with the service, and only
    // queuing a job needs it (which opens it and waits).
    const jobs = new JobEngine({
      databaseUrl,
      concurrency: config.jobConcurrency,
      longConcurrency: config.jobLongConcurrency,
      maxAttempts: config.jobMaxAttempts,
      // Real Postgres announces new jobs (LISTEN/NOTIFY); the poll finds retries and unlocked jobs. The embedded database announces nothing.
      pollIntervalMs: config.databaseUrl ? 2000 : 500,
      embedded: !config.databaseUrl,
      logger,
    });
    stack.push({ name: 'job engine', stop: () => jobs.stop() });

    const secrets = new SecretBox(config.secretKey);
    const tls = config.tls
      ? await ServiceTls.fromFiles(config.tls, logger)
      : await ServiceTls.generated(await loadOrCreateServiceCa(stores.serviceCas, secrets), serverNames(config), logger);
    stack.push({ name: 'TLS certificate', stop: async () => tls.close() });
    if (config.agentPlainHttp) {
      logger.warn('AGENT_PLAIN_HTTP=allow: agents may reach the service over plain HTTP, where their run token and the service\'s answers are unprotected');
    }
    const audit = new AuditLog(dataSource, logger);
    // One address policy (ALLOW_CLUSTER_ADDRESSES) for every connection the service makes: cluster API servers and SSH targets.
    const addresses = new ClusterAddressGuard(config.clusterAddresses);
    const clusters = createClusterFeature({
      clusters: stores.clusters,
      secrets,
      addresses,
      onChange: (cluster) => {
        announceClusterSettingsChanged(events, cluster.id);
        // A raised installsAtOnce starts the runs waiting for it now (installs exists by the time a setting can change).
        void installs.service.admitWaiting(cluster.id).catch((error: unknown) => logger.warn({ err: error, clusterId: cluster.id }, 'could not start the installs waiting for a slot yet'));
      },
      namespaces: { bootstrap: config.bootstrapNamespace, leases: config.csrApproverLeaseNamespace },
    });
    const metrics = new ApiMetrics((clusterId) => clusters.nameOf(clusterId));
    const auth = createAuthFeature({
      stores,
      secrets,
      events,
      logger,
      sessionTtlSeconds: config.sessionTtlSeconds,
      passwordChecksAtOnce: config.passwordChecksAtOnce,
      onLogin: (outcome) => metrics.loginAttempts.inc({ outcome }),
    });
    auth.start();
    stack.push({ name: 'session cache', stop: async () => auth.stop() });
    metrics.followPasswordChecks(() => auth.passwordChecks());
    const sessionUser = async (header: string | undefined) => {
      const token = bearerToken(header);
      return token ? auth.users.authenticate(token) : null;
    };
    if (config.clusterAddresses.ranges.length > 0 || config.clusterAddresses.networks.length > 0) {
      logger.warn({ allowed: [...config.clusterAddresses.ranges, ...config.clusterAddresses.networks] }, 'ALLOW_CLUSTER_ADDRESSES: cluster API servers and SSH targets may be at these otherwise refused addresses');
    }
    // One client and Node/CSR watch cache per cluster, for every feature; closed after all of them.
    const connections = new ClusterConnections(clusters.service, logger);
    stack.push({ name: 'cluster connections', stop: () => connections.close() });
    // The one publisher of install progress: the install feature's and the notices the CSR approver raises on runs.
    const installProgress = new InstallProgress(events);
    // Four-eyes: the features hold what needs a second person here; what runs once approved is registered below.
    const approvals = new ApprovalService({ store: stores.approvals, clusters: stores.clusters, clock: new SystemClock(), ttlMs: config.approvalTtlSeconds * 1000, expiryCheckMs: Math.min(15_000, Math.max(500, (config.approvalTtlSeconds * 1000) / 2)), logger: logger.child({ component: 'approvals' }), events, audit });
    const certificates = createCsrFeature({
      approvals,
      decisions: stores.csrDecisions,
      inventory: stores.csrInventory,
      notices: new RunNoticeBoard(stores.installRunNotices, installProgress),
      clusters: clusters.service,
      connections,
      events,
      logger,
      audit,
      policy: { approvalWindowMs: config.csrApprovalWindowMinutes * 60_000 },
      onDecision: metrics.domain.csrDecisionObserver,
      approver: {
        leaseNamespace: config.csrApproverLeaseNamespace,
        maxPending: config.csrApproverMaxPending,
        onImpostorDenied: (event) => void clusters.nameOf(event.clusterId).then((cluster) => metrics.impostorCsrs.inc({ cluster })),
      },
    });

    const admin = await auth.users.ensureInitialAdmin(config.adminPassword);
    if (admin?.generatedPassword) {
      (options.onGeneratedAdminPassword ?? printGeneratedPassword)(admin.generatedPassword);
    }

    metrics.followCertificates(() => certificates.nodeCertificates.all());
    if (servesApi) {
      await certificates.start();
      stack.push({ name: 'CSR auto-approver', stop: () => certificates.stop() });
    }

    const agentBinary = await loadAgentBinary(config.agentBinary, {
      onCompressFailed: (reason) => logger.warn({ reason }, 'the agent is copied uncompressed over SFTP: its zstd form cannot be made (install zstd on this machine)'),
    });
    if (!agentBinary) {
      logger.warn({ path: config.agentBinary }, 'no agent executable: nodes cannot be added until it is built (npm run build) or AGENT_BINARY points at it');
    }
    metrics.followAgentCopies(() => agentBinary?.copies ?? null);
    const agent = () => agentBinary;
    const nodeStore = stores.nodes;
    const agentTokens = stores.agentTokens;
    const sshPool = new SshPool({ maxSessions: config.sshPoolSize, connect: { connectTimeoutMs: config.sshConnectTimeoutMs, addresses } });
    stack.push({ name: 'SSH sessions', stop: () => sshPool.close() });
    const artifacts = createArtifactsFeature({
      artifactsDir: config.artifactsDir,
      connections,
      overrides: {
        get: async (clusterId) => (await clusters.service.get(clusterId)).artifactVersion,
        set: (clusterId, version) => clusters.service.setArtifactVersion(clusterId, version).then(() => undefined),
      },
      // An agent downloads its run's cluster's set; a signed-in user looking around, the default one.
      agentRun: (header) => agentTokens.authenticate(bearerToken(header)),
      clusterOfNode: async (nodeId) => (await nodeStore.get(nodeId)).clusterId,
      sessionUser,
      uploadMaxBytes: config.artifactUploadMaxBytes,
      onImport: (event) => void audit.record({
        actor: event.username, action: 'importArtifactSet', targetType: 'ArtifactSet', targetId: event.version, result: event.outcome === 'IMPORTED' ? 'SUCCESS' : 'FAILURE', detail: { detail: event.detail }, requestId: null,
      }),
    });
    const cluster = clusterProbeFrom(connections, certificates.service);
    /** Before an install or a batch starts: the cluster passes its readiness checks and has a complete artifact set. */
    const installReadiness = async (clusterId: string): Promise<void> => {
      await clusters.checks.requireReady(clusterId);
      await artifacts.requireComplete(clusterId);
    };
    let listeningPort = config.port;
    let started = false;
    const installs = createInstallFeature({
      runs: stores.installRuns,
      notices: stores.installRunNotices,
      progress: installProgress,
      nodes: nodeStore,
      batches: stores.nodeBatches,
      tokens: agentTokens,
      hostManifests: stores.hostManifests,
      connections,
      cluster,
      ssh: sshPool,
      secrets,
      agent,
      launch: {
        agentApiUrl: config.agentApiUrl,
        serviceTls: (apiUrl) => tls.agentPin(apiUrl),
        artifactManifestSha256: (clusterId) => artifacts.manifestSha256(clusterId),
        servicePort: () => listeningPort,
        vip: async (clusterId) => (await clusters.service.get(clusterId)).vip,
        machineConfigCaCert: async (clusterId) => (await clusters.service.get(clusterId)).machineConfigCaCert,
        requirements: config.hostRequirements,
        nodeReadyTimeoutSeconds: config.nodeReadyTimeoutSeconds,
        cpuProfileDir: config.agentCpuProfileDir,
      },
      agentLauncherUrl: config.agentLauncherUrl,
      readiness: installReadiness,
      bootstrapNamespace: config.bootstrapNamespace,
      runDeadlineMs: config.installRunDeadlineMinutes * 60_000,
      eventCaps: { events: config.installRunMaxEvents, bytes: config.installRunMaxEventBytes },
      stallAfterSeconds: config.stallAfterSeconds,
      sessionRole: async (header) => (await sessionUser(header))?.role ?? null,
      agentChannel: { plainHttpAllowed: config.agentPlainHttp, certificateSource: tls.source, caCertificates: () => tls.caCertificates() },
      events,
      logger,
      observer: metrics.domain.installObserver,
      jobs,
    });
    const nodes = createNodeFeature({
      clusterRecords: stores.clusters,
      nodes: nodeStore,
      batches: stores.nodeBatches,
      runs: stores.installRuns,
      secrets,
      ssh: sshPool,
      agent,
      cluster,
      watches: connections,
      clusters: clusters.service,
      leftovers: clusterLeftoverCleaner(connections, certificates.service),
      installs: installs.batches,
      installReadiness,
      batchConcurrency: Math.min(config.batchConcurrency, config.sshPoolSize),
      allowedNodeRoles: config.allowedNodeRoles,
      addresses,
      jobs,
      healthCheckIntervalMs: config.healthCheckIntervalSeconds * 1000,
      // The fleet feature is created below; nodes are answered only once the service is up.
      hostStates: (records) => fleet.inspector.statesOf(records.map((node) => ({ nodeId: node.id, clusterId: node.clusterId }))),
      nodeObjects: { set: (clusterId, nodeName, marks) => connections.read(clusterId, ({ client }, signal) => setManagedNodeMarks(client, nodeName, marks, signal)).then(() => undefined) },
      logger,
    });
    if (servesApi) {
      stack.push({ name: 'node inventory sync and health check schedule', stop: () => nodes.stop() });
      await nodes.start();
    }
    const removals = createRemovalFeature({
      approvals,
      runs: stores.removalRuns,
      nodes: nodeStore,
      tokens: agentTokens,
      clusters: connections,
      csrs: certificates.service,
      hosts: (node) => (node.sshCredentialsSealed ? sshTargetOf(node, secrets) : null),
      ssh: sshPool,
      events,
      jobs,
      logger,
      runner: { observer: metrics.domain.removalObserver, hostWaitMs: config.removalHostWaitSeconds * 1000 },
    });
    const webhooks = createWebhooksFeature({
      store: stores.webhooks,
      clusters: stores.clusters,
      jobs,
      secrets,
      addresses,
      logger,
      csrs: async (clusterId) => (await connections.watch(clusterId)).csrs(),
      csrPendingMs: config.webhookCsrPendingSeconds * 1000,
      csrCheckMs: Math.min(30_000, Math.max(1000, (config.webhookCsrPendingSeconds * 1000) / 2)),
    });
    const remediation = createRemediationFeature({
      clusters: stores.clusters,
      nodes: nodeStore,
      jobs,
      ssh: sshPool,
      secrets,
      audit,
      probe: nodes.healthChecks,
      rollouts: stores.rollouts,
      // The node groups are created below; the rung that needs them runs once the service is up.
      replacer: {
        replaceableMembers: (clusterId) => autoscaling.groups.scaling.replaceableMembers(clusterId),
        replaceMember: (nodeId, actor, removal) => autoscaling.groups.scaling.replaceMember(nodeId, actor, removal),
      },
      clock: new SystemClock(),
      intervalMs: config.remediationIntervalSeconds * 1000,
      logger,
      observer: metrics.domain.remediationObserver,
    });
    const fleet = createFleetFeature({
      approvals,
      nodes: nodeStore,
      manifests: stores.hostManifests,
      ssh: sshPool,
      secrets,
      jobs,
      clusterSetSha256: (clusterId) => artifacts.manifestSha256(clusterId),
      intervalMs: config.hostInspectionIntervalSeconds * 1000,
      rollouts: stores.rollouts,
      clusters: connections,
      audit,
      events,
      rolloutIntervalMs: config.rolloutIntervalSeconds * 1000,
      alertmanagerUrl: config.alertmanagerUrl,
      rolloutObserver: metrics.domain.rolloutObserver,
      applyRuns: { apply: (nodeId, steps, actor, lost) => installs.service.apply(nodeId, steps, actor, lost), run: (id) => installs.service.run(id) },
      clock: new SystemClock(),
      logger,
    });
    registerApprovedActions(approvals, removals, certificates.service, fleet);
    const autoscaling = createAutoscalingFeature({
      nodeGroups: stores.nodeGroups,
      clusters: stores.clusters,
      nodes: nodeStore,
      audit,
      events,
      logger,
      observer: metrics.domain.autoscalingObserver,
      allowedNodeRoles: config.allowedNodeRoles,
      ports: {
        // A spare takes its group's labels, whose roles the ADMIN who created the group gave, with the reason createNodeGroup's audit entry keeps;
        // a name removed after it joined is refused here as in addNode without an ADMIN's acknowledgement.
        addNode: async (host) => (await nodes.service.add({ ...host, labels: [...host.labels], taints: [...host.taints], acknowledgeOldCertificates: false }, { role: 'ADMIN', reason: 'the labels of its node group, given when the group was created' })).id,
        checkHost: (nodeId) => nodes.provisioner.schedule(nodeId),
        cleanLeftovers: async (nodeId, actor) => {
          await nodes.hostCleanup.clean(nodeId, actor);
        },
        installAsBatch: async (clusterId, nodeIds, actor) => (await nodes.batches.installHosts(clusterId, nodeIds, actor)).id,
        // cluster-autoscaler has cordoned and drained already; the run drains what is left (DaemonSet pods stay, like the autoscaler leaves them) and cleans the host.
        startRemoval: async (nodeId, actor, removal = {}) => {
          const run = await removals.service.start(nodeId, { ...DEFAULT_REMOVAL_OPTIONS, ignoreDaemonSets: true, deleteEmptyDirData: true, allowLastWorker: true, timeoutSeconds: 600, cleanHost: true }, actor);
          if (removal.skipHostSide) {
            await removals.service.skipHostSide(nodeId, removal.skipHostSide, actor);
          }
          return run.id;
        },
        removalOutcome: async (runId) => {
          const run = await removals.service.ended(runId);
          return { status: run.status, reason: run.reason };
        },
      },
      grpc: config.autoscalerGrpc ? () => autoscalerServerCredentials(stores.serviceCas, secrets, config) : null,
    });
    const inventory = createInventoryFeature({
      clusters: stores.clusters,
      nodes: nodeStore,
      pools: stores.nodeGroups,
      ports: {
        createPool: async (clusterId, pool, actor, by) => {
          await autoscaling.groups.registry.createGroup({ clusterId, name: pool.name, minSize: pool.minSize, maxSize: pool.maxSize, labels: [...pool.labels], taints: [...pool.taints], profile: { ...pool.profile } }, actor, by);
        },
        addSpare: async (clusterId, poolName, host, actor) => {
          const group = await stores.nodeGroups.findGroupByName(clusterId, poolName);
          if (!group) {
            throw new NotFoundError('node group', poolName);
          }
          await autoscaling.groups.registry.addSpare(group.id, host, actor);
        },
        addHost: async (host, by) => (await nodes.service.add({ ...host, labels: [...host.labels], taints: [...host.taints], acknowledgeOldCertificates: false }, by)).id,
        installHosts: async (clusterId, nodeIds, actor) => (await nodes.batches.installHosts(clusterId, nodeIds, actor, 'INVENTORY')).id,
        setMarks: async (nodeId, marks, by) => {
          await nodes.service.setMarks(nodeId, marks, by);
        },
        removalPreview: async (nodeId, options) => {
          const preview = await removals.service.preview(nodeId, options);
          // The preview's refusal is coded already; it travels on as it came.
          const refusal = preview.refusal === null ? null : ({ code: preview.refusalCode, params: preview.refusalParams ?? {}, message: preview.refusal } as CodedText);
          return { allowed: preview.allowed, refusal, evict: preview.counts.evict, skip: preview.counts.skip, refuse: preview.counts.refuse };
        },
        startRemoval: async (nodeId, options, actor) => (await removals.service.start(nodeId, options, actor)).id,
        forget: async (nodeId) => {
          await nodes.service.deleteRecord(nodeId);
        },
      },
    });
    metrics.domain.follow({
      installs: installs.gauges,
      removals: removals.gauges,
      pendingCsrs: () => connections.pendingCsrs(),
      approverLeadership: () => certificates.autoApprover.leadership(),
      blockedDrains: () => removals.runner.blockedDrains(),
      ssh: () => sshPool.stats,
      jobs: () => jobs.counts(),
      nodeHealth: () => nodes.healthChecks.countByHealth(),
      hostStates: () => fleet.inspector.countByState(),
      rollouts: () => stores.rollouts.countInProgress(),
      remediationHeld: async () =>
        (await stores.clusters.list()).flatMap((cluster) =>
          cluster.remediationPolicy?.enabled ? [{ clusterId: cluster.id, unhealthy: cluster.remediationHeld?.unhealthy ?? 0, cap: cluster.remediationHeld?.cap ?? 0 }] : [],
        ),
      approvalWindowSeconds: config.csrApprovalWindowMinutes * 60,
    });

    /** The service people and agents use: GraphQL, subscriptions, the console, the agent channel, and the orchestration not yet on the job engine. */
    async function serveApi(): Promise<{ url: string; httpsUrl: string; agentsUrl: string | null; metricsUrl: string | null; port: number }> {
      const schema = await buildApiSchema({
        auth,
        clusters,
        certificates,
        nodes,
        installs,
        removals,
        artifacts,
        autoscaling,
        autoscalerConnections: autoscalerConnections(stores.serviceCas, secrets, config, () => autoscaling.grpcPort()),
        audit,
        events,
        jobs,
        remediation: remediation.resolver,
        fleet,
        inventory,
        webhooks,
        approvals,
      });
      const http = await startHttpServer({
        port: config.port,
        host: config.host,
        consoleDir: config.consoleDir,
        graphiqlDir: config.graphiqlDir,
        maxRequestBytes: config.maxRequestBytes,
        maxAnonymousRequestBytes: config.maxAnonymousRequestBytes,
        webSocketLimits: config.webSocketLimits,
        schema,
        logger,
        metrics,
        authenticate: (token) => auth.users.authenticate(token),
        origin: requestOrigins(config.trustedProxies, logger),
        readiness,
        events,
        certificate: tls,
        agentPlainHttp: config.agentPlainHttp,
        serveMetrics: config.metricsListener === null,
        routes: (app) => {
          artifacts.mountRoutes(app);
          installs.mountRoutes(app);
        },
      });
      stack.push({ name: 'HTTP server', stop: () => http.close() });
      listeningPort = http.port;
      // Without AGENT_PORT the main port serves agents too (one port for npm start, the demo and the
      // tests); with it, agents are given its URL. The main port keeps answering agents either way,
      // so runs started before AGENT_PORT was set finish on the URL they were given.
      const agents = config.agentPort === null
        ? null
        : await startAgentListener({ port: config.agentPort, host: config.host, certificate: tls, maxRequestBytes: config.maxAnonymousRequestBytes, logger, handle: http.handle });
      if (agents) {
        stack.push({ name: 'agents listener', stop: () => agents.close() });
        listeningPort = agents.port;
      }
      const metricsListener = await startOwnMetricsListener();
      // Agents are started with the address the service listens at: installs start once it does.
      stack.push({ name: 'stall watchdog, install run sweeper and batch installs', stop: () => installs.stop() });
      const resumedBatches = await installs.start();
      if (resumedBatches > 0) {
        logger.info({ batches: resumedBatches }, 'resumed batch installs interrupted by a restart');
      }
      await autoscaling.start();
      stack.push({ name: 'node groups and the externalgrpc provider', stop: () => autoscaling.stop() });
      remediation.start();
      stack.push({ name: 'remediation', stop: async () => remediation.stop() });
      fleet.start();
      stack.push({ name: 'host inspections and rollouts', stop: async () => fleet.stop() });
      webhooks.start();
      approvals.start();
      stack.push({ name: 'approval expiry', stop: async () => approvals.stop() });
      stack.push({ name: 'webhook deliveries', stop: async () => webhooks.stop() });
      return { url: http.url, httpsUrl: http.httpsUrl, agentsUrl: agents?.httpsUrl ?? null, metricsUrl: metricsListener?.url ?? null, port: http.port };
    }
    /** A worker answers only machines: health, readiness and (unless METRICS_PORT has them) metrics on PORT, plain HTTP. */
    async function serveWorkerProbes(): Promise<{ url: string; httpsUrl: null; agentsUrl: null; metricsUrl: string | null; port: number }> {
      const probes = await startInternalListener({ port: config.port, host: config.host, logger, registry: config.metricsListener === null ? metrics.registry : null, readiness });
      stack.push({ name: 'probe listener', stop: () => probes.close() });
      const metricsListener = await startOwnMetricsListener();
      return { url: probes.url, httpsUrl: null, agentsUrl: null, metricsUrl: metricsListener?.url ?? null, port: probes.port };
    }
    async function startOwnMetricsListener(): Promise<InternalListener | null> {
      if (config.metricsListener === null) {
        return null;
      }
      const listener = await startInternalListener({ ...config.metricsListener, registry: metrics.registry, readiness: null, logger });
      stack.push({ name: 'metrics listener', stop: () => listener.close() });
      return listener;
    }
    // Until every feature has started, a database cut in the meantime still ends startup (and the
    // process), so no traffic is sent here before then.
    const readiness = async (): Promise<Readiness> => (!started ? 'starting' : (await databaseReachable(dataSource)) ? 'ready' : 'database unreachable');
    const served = servesApi ? await serveApi() : await serveWorkerProbes();
    if (runsJobs) {
      // Every task is registered by now; stopped first on the way down (the stack unwinds in reverse), before the connections its jobs use.
      stack.push({ name: 'job workers', stop: () => jobs.stopWorkers() });
      // Before the workers: a removal executing here is handed over to another worker at once, not after the workers' grace.
      stack.push({ name: 'removal runs', stop: () => removals.stop() });
    }
    const jobsStarting = new AbortController();
    stack.push({ name: 'job workers start', stop: async () => jobsStarting.abort() });
    void startJobs(jobs, { nodes, installs, removals }, logger, jobsStarting.signal, { runWorkers: runsJobs });
    started = true;
    if (servesApi) {
      logger.info(
        { url: served.url, httpsUrl: served.httpsUrl, agentsUrl: served.agentsUrl, metricsUrl: served.metricsUrl, certificateSource: tls.source, agentPlainHttp: config.agentPlainHttp },
        'ccos-scaler API listening (HTTPS and plain HTTP on one port)',
      );
    } else {
      logger.info({ url: served.url, metricsUrl: served.metricsUrl, jobConcurrency: config.jobConcurrency }, 'ccos-scaler worker running jobs (health, readiness and metrics on this port)');
    }
    return { ...served, tls, dataSource, logger, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * In the background once the service listens: the job tables, the workers (unless this process
 * only queues jobs, SERVICE_ROLE=api), then a job for every node a restart left being added,
 * every install run whose agent was never started and every removal still running; tried
 * again with backoff until it succeeds or the process stops, so that a database cut at this moment
 * does not leave a serving process that never runs or queues a job.
 */
async function startJobs(jobs: JobEngine, features: { readonly nodes: NodeFeature; readonly installs: InstallFeature; readonly removals: RemovalFeature }, logger: Logger, stopped: AbortSignal, options: { readonly runWorkers: boolean }): Promise<void> {
  const { nodes, installs, removals } = features;
  const backoff = new Backoff({ initialMs: 500, maxMs: 15_000 });
  while (!stopped.aborted) {
    try {
      await (options.runWorkers ? jobs.startWorkers() : jobs.open());
      const queued = await nodes.provisioner.resumePending();
      if (queued > 0) {
        logger.info({ nodes: queued }, 'queued again the nodes still being added');
      }
      const launches = await installs.service.resumeLaunches();
      if (launches > 0) {
        logger.info({ runs: launches }, 'queued again the starts of agents not started yet');
      }
      const removalRuns = await removals.queueRunning();
      if (removalRuns > 0) {
        logger.info({ runs: removalRuns }, 'queued again the removal runs still running');
      }
      return;
    } catch (error) {
      const retryInMs = backoff.next();
      logger.error({ err: error, component: 'jobs', retryInMs }, 'the job workers could not start; trying again');
      await setTimeout(retryInMs, undefined, { signal: stopped }).catch(() => undefined);
    }
  }
}

/** Shown once, on the first start, outside the JSON log so it is not shipped to log storage. */
function printGeneratedPassword(password: string): void {
  process.stderr.write(
    `\n  First start: created user "admin" with password\n\n      ${password}\n\n  It is shown only this once. Sign in and change it, or set ADMIN_PASSWORD before the first start.\n\n`,
  );
}

/** What each held action runs once a second person approves it: the feature's own call, as its requester's, past the hold. */
function registerApprovedActions(approvals: ApprovalService, removals: RemovalFeature, certificates: CsrService, fleet: FleetFeature): void {
  approvals.register('REMOVE_NODE', {
    run: async (params, actor) => {
      const run = await removals.service.start(String(params['nodeId']), params['options'] as RemovalOptions, actor, { approved: true });
      return `removal run ${run.id} started`;
    },
  });
  approvals.register('SKIP_REMOVAL_HOST_SIDE', {
    run: async (params, actor) => {
      const run = await removals.service.skipHostSide(String(params['nodeId']), String(params['reason']), actor, { approved: true });
      return `removal run ${run.id} goes on without its host`;
    },
  });
  approvals.register('FORCE_REMOVAL_DRAIN', {
    run: async (params, actor) => {
      const run = await removals.service.forceDrain(String(params['nodeId']), String(params['reason']), actor, { approved: true });
      return `the drain of removal run ${run.id} goes past its budgets`;
    },
  });
  approvals.register('START_ROLLOUT', {
    run: async (params, actor) => {
      const rollout = await fleet.rollouts.startRollout(params['input'] as StartRollout, actor, { approved: true });
      return `rollout ${rollout.id} started`;
    },
  });
  approvals.register('FORCE_APPROVE_CSR', {
    run: async (params, actor) => {
      const csr = await certificates.approve(String(params['clusterId']), String(params['name']), { username: actor, role: 'ADMIN' }, { force: true, reason: String(params['reason']), approved: true });
      return `CSR ${csr.name} approved (forced)`;
    },
  });
}

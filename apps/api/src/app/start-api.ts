import type { DestinationStream, Logger } from 'pino';
import type { DataSource } from 'typeorm';
import { AuditLogWriter, databaseReachable, openDatabase, redactUrl, startEmbeddedDatabase } from '@ccos/api/data-access-db';
import { SessionTokens, UserService } from '@ccos/api/feature-auth';
import { ClusterService } from '@ccos/api/feature-clusters';
import { announceClusterSettingsChanged, createCsrFeature } from '@ccos/api/feature-csrs';
import { type EventBus, createInProcessEventBus, createPostgresEventBus } from '@ccos/api/util-graphql';
import { SecretBox } from '@ccos/api/util-secrets';
import type { ApiConfig } from './config';
import { startHttpServer } from './http-server';
import { createLogger } from './logger';
import { ApiMetrics } from './metrics';
import { buildApiSchema } from './schema';

export interface RunningApi {
  readonly url: string;
  readonly port: number;
  readonly dataSource: DataSource;
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

    const secrets = new SecretBox(config.secretKey);
    const audit = new AuditLogWriter(dataSource, logger);
    const users = new UserService(dataSource, new SessionTokens(secrets.deriveKey('session tokens'), config.sessionTtlSeconds));
    const clusters = new ClusterService(dataSource, secrets, (cluster) => announceClusterSettingsChanged(events, cluster.id));
    const certificates = createCsrFeature({
      dataSource,
      clusters,
      events,
      logger,
      audit,
      policy: { approvalWindowMs: config.csrApprovalWindowMinutes * 60_000 },
      approver: { leaseNamespace: config.csrApproverLeaseNamespace },
    });

    const admin = await users.ensureInitialAdmin(config.adminPassword);
    if (admin?.generatedPassword) {
      (options.onGeneratedAdminPassword ?? printGeneratedPassword)(admin.generatedPassword);
    }

    await certificates.start();
    stack.push({ name: 'CSR watches and auto-approver', stop: () => certificates.stop() });

    const schema = await buildApiSchema({ users, clusters, csrs: certificates.service, audit, events });
    const http = await startHttpServer({
      port: config.port,
      host: config.host,
      consoleDir: config.consoleDir,
      maxRequestBytes: config.maxRequestBytes,
      schema,
      logger,
      metrics: new ApiMetrics(),
      authenticate: (token) => users.authenticate(token),
      ready: () => databaseReachable(dataSource),
    });
    stack.push({ name: 'HTTP server', stop: () => http.close() });
    logger.info({ url: http.url }, 'ccos-scaler API listening');
    return { url: http.url, port: http.port, dataSource, logger, close };
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

import { mkdirSync } from 'node:fs';
import { ArtifactClient, EventSender, GraphqlApiClient, Spool } from '@ccos/agent/data-access-api';
import {
  EXIT_CODES, InstallRunner, RunControl, defaultStepRegistry, statePaths,
} from '@ccos/agent/feature-steps';
import {
  FileLogger, NodeExecutor, NodeFileSystem, NodeHttp, NodeNetwork, NodeSystemInfo, SystemClock, type TlsPin,
} from '@ccos/agent/util-host';
import { loadConfig } from './load-config';
import { isAgentFor, processAlive, readPid, removePid, writePid } from './pid-file';
import { AGENT_VERSION } from './version';

/** How the service is recognised, for the log's first line. */
function describeServiceTrust(pin: TlsPin | null): string {
  if (pin === null) {
    return 'plain HTTP: not authenticated';
  }
  const parts = [
    pin.caCertificates === undefined ? null : 'certificate chain to the pinned CA',
    pin.verifyHostname === true ? 'name checked' : null,
    pin.publicKeySha256 === undefined ? null : `public key pinned (${pin.publicKeySha256.length})`,
  ];
  return `TLS: ${parts.filter((part) => part !== null).join(', ')}`;
}

/** Set by `start` for the detached agent: its stdout/stderr already are agent.log. */
export const DETACHED_ENV = 'BOOT_WORKER_DETACHED';

/**
 * `boot-worker run`: the composition root. Wires the real host, HTTP and
 * clock into the runner, owns the signals, and turns the outcome into the
 * exit code.
 */
export async function runAgent(configFile: string): Promise<number> {
  const loaded = loadConfig(configFile);
  if (!loaded.ok) {
    process.stderr.write(`boot-worker: ${loaded.message}\n`);
    return EXIT_CODES.badConfig;
  }
  const { config } = loaded;
  const paths = statePaths(config.stateDir);
  mkdirSync(config.stateDir, { recursive: true, mode: 0o700 });
  const other = readPid(paths.pid);
  if (other !== null && other !== process.pid && processAlive(other) && isAgentFor(other, loaded.path)) {
    process.stderr.write(`boot-worker: another agent (pid ${other}) is already running run ${config.runId}\n`);
    return EXIT_CODES.alreadyRunning;
  }
  writePid(paths.pid, process.pid);
  const log = new FileLogger(paths.log, process.env[DETACHED_ENV] !== '1');
  log.info(`boot-worker ${AGENT_VERSION} (node ${process.version}) pid ${process.pid}: run ${config.runId}, node ${config.nodeName} (${config.nodeIp}), service ${config.apiUrl} (${describeServiceTrust(config.serviceTls)}), from ${config.startStep}`);
  for (const warning of loaded.warnings) {
    log.warn(warning);
  }

  const terminate = new AbortController();
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals += 1;
    if (signals > 1) {
      log.error(`${signal} again: exiting now`);
      process.exit(EXIT_CODES.terminated);
    }
    log.warn(`${signal}: reporting the current step as stopped, flushing the spool, then exiting`);
    terminate.abort();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  // The SSH session that started us may hang up; we are in our own session, but be sure.
  process.on('SIGHUP', () => log.info('SIGHUP ignored'));
  process.on('unhandledRejection', (reason) => log.error(`unhandled rejection (continuing): ${reason instanceof Error ? reason.stack : String(reason)}`));
  process.on('uncaughtException', (error) => log.error(`uncaught exception (continuing): ${error.stack ?? error.message}`));

  const clock = new SystemClock();
  const fs = new NodeFileSystem();
  const http = new NodeHttp(`boot-worker/${AGENT_VERSION}`);
  const control = new RunControl();
  const api = control.observe(new GraphqlApiClient({ apiUrl: config.apiUrl, token: config.token, serviceTls: config.serviceTls, http, clock }));
  const spool = await Spool.open(fs, paths.spool, config.runId, log);
  const sender = new EventSender({
    spool,
    api,
    clock,
    log,
    ...control.senderHooks,
  });
  const runner = new InstallRunner({
    config,
    registry: defaultStepRegistry(),
    exec: new NodeExecutor(),
    fs,
    clock,
    api,
    http,
    net: new NodeNetwork(),
    system: new NodeSystemInfo(),
    artifacts: new ArtifactClient({
      apiUrl: config.apiUrl, token: config.token, serviceTls: config.serviceTls, manifestSha256: config.artifactManifestSha256, http, fs, clock, log,
    }),
    log,
    sender,
    control,
    agentVersion: AGENT_VERSION,
  });
  const outcome = await runner.run(terminate.signal);
  log.info(`exiting with ${outcome.exitCode} (${outcome.kind}${'step' in outcome && outcome.step !== null ? ` at ${outcome.step}` : ''})`);
  removePid(paths.pid, process.pid);
  log.close();
  return outcome.exitCode;
}

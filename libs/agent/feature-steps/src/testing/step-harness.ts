import { ArtifactClient } from '@ccos/agent/data-access-api';
import { FakeApiClient } from '@ccos/agent/data-access-api/testing';
import { HttpError, type HttpRequest } from '@ccos/agent/util-host';
import {
  FakeClock, FakeExecutor, FakeHttp, FakeNetwork, FakeSystemInfo, MemoryFileSystem, MemoryLogger, type FakeHttpReply,
} from '@ccos/agent/util-host/testing';
import type { AgentConfig } from '../lib/agent-config';
import type { ProgressUpdate, StepContext } from '../lib/step-handler';
import { FakeArtifactServer } from './artifact-server';

export const API_URL = 'https://198.18.0.1:4000';
/** Stands for the service CA's PEM in configs (the fakes do no TLS). */
export const SERVICE_CA_PEM = '-----BEGIN CERTIFICATE-----\nMIIBservice\n-----END CERTIFICATE-----\n';
export const TOKEN = 'agt_test-token-0123456789';

/** A valid config for host h1 of the lab. */
export function testConfig(overrides: Partial<AgentConfig> = {}): AgentConfig {
  return {
    apiUrl: API_URL,
    serviceTls: { caCertificates: SERVICE_CA_PEM },
    artifactManifestSha256: '0'.repeat(64),
    runId: 'run-1',
    token: TOKEN,
    nodeName: 'h1',
    nodeIp: '198.18.0.11',
    vip: '198.18.0.2',
    labels: [],
    taints: [],
    providerId: null,
    startStep: 'PREFLIGHT',
    machineConfigCaCert: null,
    stateDir: '/opt/ccos-scaler/runs/run-1',
    requirements: { minKernel: '4.18', minMemoryBytes: 8 * 1024 ** 3, minCpus: 2, maxClockSkewSeconds: 5 },
    timeouts: { nodeReadySeconds: 1800 },
    kubeletBootstrapToken: null,
    purpose: 'INSTALL',
    steps: null,
    ...overrides,
  };
}

export type Route = (request: HttpRequest) => FakeHttpReply | undefined | Promise<FakeHttpReply | undefined>;

/** Everything a step handler touches, faked, plus what it reported. */
export interface StepHarness {
  readonly ctx: StepContext;
  readonly config: AgentConfig;
  readonly exec: FakeExecutor;
  readonly fs: MemoryFileSystem;
  readonly clock: FakeClock;
  readonly api: FakeApiClient;
  readonly http: FakeHttp;
  readonly net: FakeNetwork;
  readonly system: FakeSystemInfo;
  readonly log: MemoryLogger;
  readonly server: FakeArtifactServer;
  readonly abort: AbortController;
  /** PROGRESS updates, with the virtual time they were made at. */
  readonly progress: (ProgressUpdate & { readonly at: number })[];
  /** Extra HTTP routes (tried before the artifact server). */
  readonly routes: Route[];
}

export function stepHarness(configOverrides: Partial<AgentConfig> = {}): StepHarness {
  const config = testConfig(configOverrides);
  const clock = new FakeClock();
  const fs = new MemoryFileSystem();
  fs.seed({ [`${config.stateDir}/.keep`]: '' });
  const log = new MemoryLogger();
  const server = new FakeArtifactServer(config.apiUrl, config.token);
  const routes: Route[] = [];
  const http = new FakeHttp(async (request) => {
    const refuse = server.refuse.shift();
    if (refuse !== undefined && request.url.startsWith(`${config.apiUrl}/artifacts/`)) {
      throw new HttpError(`connect ECONNREFUSED ${config.apiUrl}`, 'ECONNREFUSED');
    }
    for (const route of routes) {
      const reply = await route(request);
      if (reply !== undefined) {
        return reply;
      }
    }
    const reply = server.handle(request);
    if (reply === undefined) {
      throw new HttpError(`no route to ${request.url}`, 'EHOSTUNREACH');
    }
    return reply;
  });
  const api = new FakeApiClient(clock);
  const exec = new FakeExecutor();
  const net = new FakeNetwork({}, { h1: ['198.18.0.11'] });
  const system = new FakeSystemInfo('h1', 4);
  const abort = new AbortController();
  const progress: (ProgressUpdate & { readonly at: number })[] = [];
  const artifacts = new ArtifactClient({
    apiUrl: config.apiUrl, token: config.token, serviceTls: config.serviceTls, http, fs, clock, log, random: () => 0.5,
    // The pin follows what the fake serves until a test freezes it (server.pinManifest()).
    get manifestSha256() {
      return server.pinnedManifestSha256();
    },
  });
  const ctx: StepContext = {
    config, exec, fs, clock, api, http, net, system, artifacts, log,
    signal: abort.signal,
    progress: async (update) => {
      progress.push({ ...update, at: clock.monotonic() });
    },
  };
  return { ctx, config, exec, fs, clock, api, http, net, system, log, server, abort, progress, routes };
}

import pino from 'pino';
import { AgentTokens, type Database, type JobRegistry, type NodeStore, RemovalRunStore, type RemovalRunProgress } from '@ccos/api/data-access-db';
import { listNodes } from '@ccos/api/data-access-kube';
import type { SimWithClient } from '@ccos/api/data-access-kube/testing';
import type { SshPool } from '@ccos/api/data-access-ssh';
import { createInProcessEventBus } from '@ccos/api/util-graphql';
import type { Clock } from '@ccos/shared/util-timing';
import { KUBE_DRAINS } from '../lib/phases/drain.phase';
import { removalPhaseRegistry } from '../lib/phases/phase-registry';
import { RemovalLog } from '../lib/removal-log';
import type { ClusterAccess } from '../lib/removal-ports';
import { RemovalRunner } from '../lib/removal-runner';
import { RemovalService } from '../lib/removal.service';
import { HOST_TARGET } from './phase-harness';

/** The run store, noting in `trace` how many events were stored when a run's final status was written. */
export class EndNotingRunStore extends RemovalRunStore {
  readonly trace: string[] = [];

  override async updateOwned(id: string, owner: string, fields: RemovalRunProgress): Promise<boolean> {
    const ends = fields.status !== undefined && fields.status !== 'RUNNING';
    const stored = ends ? (await this.events.list(id)).length : 0;
    const updated = await super.updateOwned(id, owner, fields);
    if (updated && ends) {
      this.trace.push(`ended ${fields.status} with ${stored} events stored`);
    }
    return updated;
  }
}

export interface RemovalReplicaOptions {
  readonly dataSource: Database;
  readonly world: SimWithClient;
  readonly nodes: NodeStore;
  readonly ssh: SshPool;
  readonly jobs: JobRegistry;
  readonly clock: Clock;
  /** This process in `removal_runs.owner`. */
  readonly identity: string;
  readonly evictionRetryMs?: number;
  readonly heartbeatMs?: number;
}

/**
 * One process's removal feature against kube-sim and Postgres, its hosts and CSRs faked: what it
 * did to them is recorded in `done`.
 */
export async function removalReplica(options: RemovalReplicaOptions) {
  const { world, clock } = options;
  const logger = pino({ level: 'silent' });
  const summaries = await listNodes(world.client);
  const clusters: ClusterAccess = {
    watch: async () => ({ client: world.client, nodes: () => summaries, podsOnNode: () => null }),
    read: async (_id, read) => read({ client: world.client, nodes: () => summaries, podsOnNode: () => null }, new AbortController().signal),
  };
  const done = { host: [] as string[], denied: [] as string[], refusals: 0, finished: [] as string[] };
  const runs = new EndNotingRunStore(options.dataSource);
  const log = new RemovalLog(runs, createInProcessEventBus(), logger);
  const observer = { runFinished: (outcome: string) => done.finished.push(outcome), evictionRefused: () => (done.refusals += 1) };
  const phases = removalPhaseRegistry({
    clusters,
    drains: KUBE_DRAINS,
    clock,
    observer,
    evictionRetryMs: options.evictionRetryMs,
    nodes: options.nodes,
    hosts: () => HOST_TARGET,
    hostCommands: {
      stopKubelet: async (target) => {
        done.host.push(`stop kubelet on ${target.host}`);
        return { outcome: 'STOPPED', message: { code: 'removal.host.kubeletStopped', params: { host: target.host }, message: 'kubelet stopped' } };
      },
      cleanHost: async (target) => {
        done.host.push(`clean ${target.host}`);
        return { reached: true, ok: true, removed: ['/opt/ccos-scaler'], message: { code: 'removal.host.cleaned', params: { removed: '/opt/ccos-scaler', host: target.host }, message: 'cleaned' } };
      },
    },
    csrs: { pendingCsrNamesFor: async (_id, node) => [`csr-${node}`], deny: async (_id, name) => done.denied.push(name) },
    tokens: new AgentTokens(options.dataSource),
  });
  const runner = new RemovalRunner(runs, options.nodes, phases, log, options.jobs, logger, { identity: options.identity, clock, observer, heartbeatMs: options.heartbeatMs });
  const service = new RemovalService(runs, options.nodes, clusters, () => HOST_TARGET, options.ssh, runner);
  return { runner, service, runs, done };
}

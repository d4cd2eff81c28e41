import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { JobEngine, type NodeEntity, type NodeStore, openDatabase } from '@ccos/api/data-access-db';
import { createTestDatabase, type TestDatabase } from '@ccos/api/data-access-db/testing';
import type { SshPool } from '@ccos/api/data-access-ssh';
import type { SecretBox } from '@ccos/api/util-secrets';
import { NodeProvisioner } from './node-provisioner';

const logger = pino({ level: 'silent' });
const agent = () => ({ path: '/agent', size: 1, sha256: 'a'.repeat(64), version: '1' });

/**
 * Nodes as the provisioner reads and moves them. Each provisioning reads the node, fails to reach
 * it (no credentials here) and records the failure; `hold` keeps a node's recording waiting, as a
 * closing SSH session keeps it.
 */
function nodeRecords(hosts: Record<string, string>) {
  const started: string[] = [];
  const finished: string[] = [];
  const running = new Set<string>();
  const overlaps: string[] = [];
  const held = new Map<string, Promise<void>>();
  const releases = new Map<string, () => void>();
  const record = (id: string) => ({ id, hostname: id, status: 'ADDING', ip: hosts[id], sshPort: 22 }) as NodeEntity;
  const store = {
    get: async (id: string) => record(id),
    find: async (id: string) => {
      if (!(id in hosts)) {
        return null;
      }
      started.push(id);
      for (const other of running) {
        if (hosts[other] === hosts[id]) {
          overlaps.push(`${other}+${id}`);
        }
      }
      running.add(id);
      return record(id);
    },
    transition: async (id: string) => {
      await held.get(id);
      running.delete(id);
      finished.push(id);
    },
  } as unknown as NodeStore;
  return {
    store,
    started,
    finished,
    overlaps,
    hold(id: string) {
      held.set(id, new Promise<void>((resolve) => releases.set(id, resolve)));
    },
    release(id: string) {
      held.delete(id);
      releases.get(id)?.();
    },
  };
}

describe('NodeProvisioner on the durable job engine (real Postgres)', () => {
  let database: TestDatabase;
  const engines: JobEngine[] = [];

  beforeAll(async () => {
    database = await createTestDatabase('ccos_provision');
    // The service's own migrations make the heartbeat table.
    await (await openDatabase({ url: database.url })).destroy();
  });
  afterEach(async () => {
    await Promise.all(engines.splice(0).map((engine) => engine.stop()));
  });
  afterAll(async () => {
    await database?.drop();
  });

  async function provisionerOver(nodes: NodeStore): Promise<{ provisioner: NodeProvisioner; jobs: JobEngine }> {
    const jobs = new JobEngine({ databaseUrl: database.url, concurrency: 4, pollIntervalMs: 100, embedded: false, logger });
    engines.push(jobs);
    await jobs.open();
    const provisioner = new NodeProvisioner(nodes, {} as SecretBox, {} as SshPool, agent, jobs, logger);
    await jobs.startWorkers();
    return { provisioner, jobs };
  }

  it('runs again when asked while the last provisioning of the node is still finishing, instead of dropping the request', async () => {
    const nodes = nodeRecords({ n1: '198.18.0.9' });
    const { provisioner } = await provisionerOver(nodes.store);
    nodes.hold('n1');

    await provisioner.schedule('n1');
    await expect.poll(() => nodes.started).toEqual(['n1']);
    await provisioner.schedule('n1');
    await provisioner.schedule('n1');
    expect(nodes.started).toEqual(['n1']);
    nodes.release('n1');
    await expect.poll(() => nodes.finished).toEqual(['n1', 'n1']);
    expect(nodes.started).toEqual(['n1', 'n1']);
  });

  it('provisions two records of one host one after the other, and records of other hosts beside them', async () => {
    const nodes = nodeRecords({ a: '198.18.0.21', b: '198.18.0.21', c: '198.18.0.22' });
    const { provisioner } = await provisionerOver(nodes.store);
    nodes.hold('a');

    await provisioner.schedule('a');
    await expect.poll(() => nodes.started).toEqual(['a']);
    await provisioner.schedule('b');
    await provisioner.schedule('c');
    await expect.poll(() => nodes.finished).toEqual(['c']);
    expect(nodes.started).not.toContain('b');
    nodes.release('a');
    await expect.poll(() => [...nodes.finished].sort()).toEqual(['a', 'b', 'c']);
    expect(nodes.overlaps).toEqual([]);
  });

  it('ends the job of a record deleted before it ran without an error to retry', async () => {
    const nodes = nodeRecords({ kept: '198.18.0.31' });
    const deleted = { ...nodes.store, get: async (id: string) => ({ id, hostname: id, status: 'ADDING', ip: '198.18.0.32', sshPort: 22 }) as NodeEntity } as NodeStore;
    const { provisioner, jobs } = await provisionerOver(deleted);

    await provisioner.schedule('gone');
    await provisioner.schedule('kept');
    await expect.poll(() => nodes.finished).toEqual(['kept']);
    await expect.poll(() => jobs.counts()).toEqual({ waiting: 0, running: 0, failed: 0 });
    expect(nodes.started).toEqual(['kept']);
  });
});

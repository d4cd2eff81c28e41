import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { message } from '@ccos/shared/messages';
import { createTestDatabase, type TestDatabase } from '../testing';
import { openDatabase } from './data-source';
import { ClusterEntity } from './entities/cluster.entity';
import { NodeEntity } from './entities/node.entity';
import { NodeStore, reasonFields } from './node.store';

describe('node store: a late report does not write over a newer state', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let clusterId: string;
  const told: Array<{ id: string; status: string }> = [];
  let nodes: NodeStore;

  beforeAll(async () => {
    database = await createTestDatabase();
    dataSource = await openDatabase({ url: database.url });
    clusterId = randomUUID();
    await dataSource.getRepository(ClusterEntity).insert({ id: clusterId, name: 'c', apiServerUrl: 'https://api:6443', vip: '198.18.0.2', credentialsSealed: 's', credentialKind: 'TOKEN' });
    nodes = new NodeStore(dataSource, (node) => told.push({ id: node.id, status: node.status }));
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  async function nodeIn(status: NodeEntity['status']): Promise<string> {
    const id = randomUUID();
    await dataSource.getRepository(NodeEntity).insert({ id, clusterId, hostname: `w-${id.slice(0, 8)}`, status, ...reasonFields(message('node.nodeReady')) });
    return id;
  }

  it('writes the fields and tells subscribers while the node is in the expected status', async () => {
    const id = await nodeIn('INSTALLING');
    const waiting = message('node.waitingForCsrs', { count: 2, csrs: 'csr-a, csr-b' });
    const changed = await nodes.updateWhile(id, 'INSTALLING', reasonFields(waiting));
    expect(changed?.statusReasonCoded).toEqual({ code: 'node.waitingForCsrs', params: { count: 2, csrs: 'csr-a, csr-b' } });
    expect((await nodes.get(id)).statusReasonCoded?.code).toBe('node.waitingForCsrs');
    expect(told.filter((node) => node.id === id)).toEqual([{ id, status: 'INSTALLING' }]);
  });

  it('changes nothing and tells nobody once the node has moved on (an install\'s last progress after its success)', async () => {
    const id = await nodeIn('JOINED');
    const changed = await nodes.updateWhile(id, 'INSTALLING', reasonFields(message('node.waitingForCsrs', { count: 1, csrs: 'csr-a' })));
    expect(changed).toBeNull();
    const node = await nodes.get(id);
    expect(node.status).toBe('JOINED');
    expect(node.statusReasonCoded?.code).toBe('node.nodeReady');
    expect(told.some((change) => change.id === id)).toBe(false);
  });

  it('writes "waiting for a slot" only while the install run still waits: an admission that came first is not written over', async () => {
    const waitingReason = reasonFields(message('node.waitingForInstallSlot', { limit: 1 }));
    const id = await nodeIn('INSTALLING');
    const runId = randomUUID();
    await dataSource.query(`INSERT INTO install_runs (id, node_id, status, requested_by, admitted_at) VALUES ($1, $2, 'RUNNING', 'operator', NULL)`, [runId, id]);
    expect((await nodes.updateWhile(id, 'INSTALLING', waitingReason, { runWaiting: runId }))?.statusReasonCoded?.code).toBe('node.waitingForInstallSlot');

    await dataSource.query('UPDATE install_runs SET admitted_at = now() WHERE id = $1', [runId]);
    await nodes.updateWhile(id, 'INSTALLING', reasonFields(message('node.startingAgent')));
    expect(await nodes.updateWhile(id, 'INSTALLING', waitingReason, { runWaiting: runId })).toBeNull();
    expect((await nodes.get(id)).statusReasonCoded?.code).toBe('node.startingAgent');
  });
});

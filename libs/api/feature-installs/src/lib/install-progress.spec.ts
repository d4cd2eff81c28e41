import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, InstallRunNotices, openDatabase } from '@ccos/api/data-access-db';
import { createTestDatabase, type TestDatabase } from '@ccos/api/data-access-db/testing';
import { createInProcessEventBus, type InstallProgressPayload, TOPICS } from '@ccos/api/util-graphql';
import { InstallProgress, RunNoticeBoard } from './install-progress';

describe('install progress: one publisher, and notices other features raise on a run', () => {
  let database: TestDatabase;
  let dataSource: Database;

  beforeAll(async () => {
    database = await createTestDatabase();
    dataSource = await openDatabase({ url: database.url, maxConnections: 2 });
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  it('stores a raised notice on the run first, then tells the node’s followers, who then read it', async () => {
    const bus = createInProcessEventBus();
    const clusterId = randomUUID();
    const nodeId = randomUUID();
    const runId = randomUUID();
    await dataSource.query(`INSERT INTO clusters (id, name, api_server_url, vip, credentials_sealed, credential_kind) VALUES ($1, 'c', 'https://127.0.0.1:6443', '198.18.0.2', 'x', 'KUBECONFIG')`, [clusterId]);
    await dataSource.query(`INSERT INTO nodes (id, cluster_id, hostname, status) VALUES ($1, $2, 'w1', 'INSTALLING')`, [nodeId, clusterId]);
    await dataSource.query(`INSERT INTO install_runs (id, node_id, status, start_step, requested_by) VALUES ($1, $2, 'RUNNING', 'PREFLIGHT', 'operator')`, [runId, nodeId]);
    const notices = new InstallRunNotices(dataSource);
    const heard: Array<{ payload: InstallProgressPayload; storedThen: number }> = [];
    const following = (async () => {
      for await (const payload of bus.subscribe(TOPICS.INSTALL_PROGRESS, nodeId) as AsyncIterable<InstallProgressPayload>) {
        heard.push({ payload, storedThen: (await notices.of(runId)).length });
        return;
      }
    })();
    const board = new RunNoticeBoard(notices, new InstallProgress(bus));
    await board.raise({ nodeId, runId, kind: 'CSR_IMPOSTOR', subject: 'system:serviceaccount:x:y', message: 'denied csr-1' });
    await following;
    expect(heard).toEqual([{ payload: { nodeId, runId, seq: 0, step: null, status: null, runStatus: null }, storedThen: 1 }]);
    expect((await notices.of(runId)).map((notice) => [notice.kind, notice.subject, notice.message])).toEqual([['CSR_IMPOSTOR', 'system:serviceaccount:x:y', 'denied csr-1']]);
  });
});

import { randomUUID } from 'node:crypto';
import { type Client, createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type ApiHarness, startApiHarness } from '../testing/api-test-harness';

const CHANGES = 'subscription($c: ID!, $n: ID) { nodeChanged(clusterId: $c, nodeId: $n) { nodeId node { hostname status labels { key value } } } }';
const SET_LABELS = 'mutation($n: ID!, $labels: [LabelInput!]!) { setNodeLabels(nodeId: $n, labels: $labels) { id } }';
const DELETE = 'mutation($n: ID!) { deleteNodeRecord(nodeId: $n) { id } }';

interface Change {
  nodeId: string;
  node: { hostname: string; status: string; labels: Array<{ key: string; value: string }> } | null;
}

/** A stream of nodeChanged messages on its own connection. */
interface Stream {
  readonly changes: Change[];
  readonly errors: unknown[];
  /** Resolves once `count` messages (or an error) arrived. */
  until(count: number): Promise<void>;
}

/**
 * nodeChanged for one node: a page reads the node, then subscribes, so a change in between would
 * be lost for good (the node page once stayed INSTALLING on a node that had joined). With nodeId
 * the first message is the node as it is now, and only that node's changes follow.
 */
describe('nodeChanged for one node', () => {
  let harness: ApiHarness;
  let admin: string;
  const clients: Client[] = [];
  const clusterId = randomUUID();
  const watched = randomUUID();
  const other = randomUUID();

  beforeAll(async () => {
    harness = await startApiHarness();
    admin = await harness.login('admin', 'admin-password-for-tests');
    const db = harness.api.dataSource;
    await db.query(`INSERT INTO clusters (id, name, api_server_url, vip, credentials_sealed, credential_kind) VALUES ($1, 'changes', 'https://10.0.0.1:6443', '10.0.0.1', 'x', 'TOKEN')`, [clusterId]);
    for (const [id, hostname, ip] of [[watched, 'w1', '10.0.0.11'], [other, 'w2', '10.0.0.12']]) {
      await db.query(`INSERT INTO nodes (id, cluster_id, hostname, ip, status) VALUES ($1, $2, $3, $4, 'READY_TO_INSTALL')`, [id, clusterId, hostname, ip]);
    }
  });

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.dispose()));
    await harness?.stop();
  });

  const subscribe = (variables: { c: string; n?: string }): Stream => {
    const changes: Change[] = [];
    const errors: unknown[] = [];
    const waiters: Array<() => void> = [];
    const wake = () => waiters.splice(0).forEach((waiter) => waiter());
    const client = createClient({ url: `${harness.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, lazy: false, retryAttempts: 0, connectionParams: { authorization: `Bearer ${admin}` } });
    clients.push(client);
    client.subscribe<{ nodeChanged: Change }>(
      { query: CHANGES, variables },
      {
        next: (message) => {
          if (message.errors) {
            errors.push(...message.errors);
          }
          if (message.data) {
            changes.push(message.data.nodeChanged);
          }
          wake();
        },
        error: (error) => {
          errors.push(error);
          wake();
        },
        complete: wake,
      },
    );
    const until = async (count: number) => {
      while (changes.length < count && errors.length === 0) {
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    };
    return { changes, errors, until };
  };

  it('sends the node as it is now first, then that node\'s changes only, its deletion included', async () => {
    const stream = subscribe({ c: clusterId, n: watched });
    await stream.until(1);
    expect(stream.changes).toEqual([{ nodeId: watched, node: { hostname: 'w1', status: 'READY_TO_INSTALL', labels: [] } }]);

    expect((await harness.gql(SET_LABELS, { n: other, labels: [{ key: 'rack', value: 'r2' }] }, admin)).errors).toBeUndefined();
    expect((await harness.gql(SET_LABELS, { n: watched, labels: [{ key: 'rack', value: 'r1' }] }, admin)).errors).toBeUndefined();
    expect((await harness.gql(DELETE, { n: watched }, admin)).errors).toBeUndefined();
    await stream.until(3);
    expect(stream.errors).toEqual([]);
    expect(stream.changes.slice(1)).toEqual([
      { nodeId: watched, node: { hostname: 'w1', status: 'READY_TO_INSTALL', labels: [{ key: 'rack', value: 'r1' }] } },
      { nodeId: watched, node: null },
    ]);
  });

  it('without nodeId, sends no first message, and every node\'s changes of the cluster', async () => {
    const stream = subscribe({ c: clusterId });
    // Changed until the stream hears it (it may not be subscribed yet): a first message would carry the label set earlier, r2.
    for (let change = 1; stream.changes.length === 0 && stream.errors.length === 0; change += 1) {
      expect((await harness.gql(SET_LABELS, { n: other, labels: [{ key: 'rack', value: `c${change}` }] }, admin)).errors).toBeUndefined();
      await Promise.race([stream.until(1), new Promise((resolve) => setTimeout(resolve, 100))]);
    }
    expect((await harness.gql(DELETE, { n: other }, admin)).errors).toBeUndefined();
    while (!stream.changes.some((change) => change.node === null) && stream.errors.length === 0) {
      await stream.until(stream.changes.length + 1);
    }
    expect(stream.errors).toEqual([]);
    expect(stream.changes.at(-1)).toEqual({ nodeId: other, node: null });
    expect(stream.changes.slice(0, -1).every((change) => change.nodeId === other && change.node?.labels[0]?.value.startsWith('c'))).toBe(true);
  });

  it('refuses a node id that is not an id as an unknown node', async () => {
    const stream = subscribe({ c: clusterId, n: 'not-a-uuid' });
    await stream.until(1);
    expect(stream.changes).toEqual([]);
    expect(JSON.stringify(stream.errors)).toContain('NOT_FOUND');
  });
});

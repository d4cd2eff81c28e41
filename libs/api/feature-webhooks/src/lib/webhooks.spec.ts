import { createHmac, randomUUID } from 'node:crypto';
import { type IncomingHttpHeaders, type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ClusterEntity, ClusterStore, type Database, NodeStore, WebhookStore, openDatabase } from '@ccos/api/data-access-db';
import { RecordingJobs, createTestDatabase, type TestDatabase } from '@ccos/api/data-access-db/testing';
import { ClusterAddressGuard, type CsrSummary } from '@ccos/api/data-access-kube';
import { appErrorOf } from '@ccos/api/util-graphql/testing';
import { SecretBox } from '@ccos/api/util-secrets';
import { SystemClock } from '@ccos/shared/util-timing';
import { CsrWaitWatch } from './csr-wait-watch';
import { DELIVER_TASK, type WebhookEvent } from './webhook-dispatcher';
import { createWebhooksFeature } from './webhooks-feature';

interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** The receiver's own check, written here from the documented format rather than taken from the product. */
function signatureHolds(secret: string, headers: IncomingHttpHeaders, body: string): boolean {
  const header = String(headers['x-signature'] ?? '');
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  if (!match) {
    return false;
  }
  const expected = createHmac('sha256', secret).update(`${match[1]}.${body}`).digest('hex');
  return expected === match[2] && Math.abs(Date.now() / 1000 - Number(match[1])) < 300;
}

/**
 * Webhook endpoints on the real Postgres (whose trigger records every change of a node's status)
 * delivering to a receiver on loopback: in order, signed, nothing lost while it is down.
 */
describe('webhooks', () => {
  let database: TestDatabase;
  let dataSource: Database;
  let nodes: NodeStore;
  let store: WebhookStore;
  let receiver: Server;
  let url = '';
  /** What the receiver answers next: a status code. */
  let answer = 200;
  const accepted: Received[] = [];
  const refused: Received[] = [];
  const secrets = new SecretBox('webhooks-spec-secret-key-0123456789abcdef');
  const logger = pino({ level: 'silent' });

  const clusterNamed = async (name: string): Promise<string> => {
    const id = randomUUID();
    await dataSource.getRepository(ClusterEntity).insert({ id, name, apiServerUrl: 'https://api:6443', vip: '198.18.0.2', credentialsSealed: 's', credentialKind: 'TOKEN' });
    return id;
  };
  const feature = (addresses = ClusterAddressGuard.allowing('loopback'), jobs = new RecordingJobs()) =>
    ({ jobs, ...createWebhooksFeature({ store, clusters: new ClusterStore(dataSource), jobs, secrets, addresses, logger, clock: new SystemClock() }) });
  const events = (received: readonly Received[]) => received.map((entry) => JSON.parse(entry.body) as WebhookEvent);

  beforeAll(async () => {
    database = await createTestDatabase();
    dataSource = await openDatabase({ url: database.url, maxConnections: 4 });
    nodes = new NodeStore(dataSource, () => undefined);
    store = new WebhookStore(dataSource);
    receiver = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        (answer >= 200 && answer < 300 ? accepted : refused).push({ headers: request.headers, body });
        response.writeHead(answer).end();
      });
    });
    await new Promise<void>((listening) => receiver.listen(0, '127.0.0.1', listening));
    url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  });
  afterAll(async () => {
    await new Promise((closed) => receiver?.close(closed));
    await dataSource?.destroy();
    await database?.drop();
  });
  beforeEach(() => {
    accepted.length = 0;
    refused.length = 0;
    answer = 200;
  });

  it('sends every status change of the cluster’s nodes after the endpoint was made, in order, signed with its secret; not another cluster’s', async () => {
    const [ours, theirs] = [await clusterNamed('ours'), await clusterNamed('theirs')];
    await nodes.create({ clusterId: ours, hostname: 'before', status: 'ADDING' });
    const { service, dispatcher, jobs } = feature();
    const { endpoint, secret } = await service.create({ clusterId: ours, url, description: 'on-call' }, 'admin');
    expect(secret).toMatch(/^whsec_[\w-]{43}$/);
    // Sealed at rest: the stored row does not hold the secret.
    expect(JSON.stringify(await dataSource.query('SELECT * FROM webhook_endpoints'))).not.toContain(secret);

    const node = await nodes.create({ clusterId: ours, hostname: 'w1', ip: '198.18.0.41', status: 'ADDING' });
    const other = await nodes.create({ clusterId: theirs, hostname: 'x1', status: 'ADDING' });
    for (const status of ['READY_TO_INSTALL', 'INSTALLING', 'JOINED'] as const) {
      await dataSource.query('UPDATE nodes SET status = $2, status_reason = $3 WHERE id = $1', [node.id, status, `now ${status}`]);
      await dataSource.query('UPDATE nodes SET status = $2 WHERE id = $1', [other.id, status]);
    }
    expect(await store.behind()).toEqual([endpoint.id]);
    await dispatcher.queueBehind();
    expect(jobs.queued.map((job) => [job.task, job.payload, job.options?.queue])).toEqual([[DELIVER_TASK, { endpointId: endpoint.id }, `webhook:${endpoint.id}`]]);
    await jobs.run(DELIVER_TASK, { endpointId: endpoint.id });

    expect(events(accepted).map((event) => [event.type, event.old_state, event.new_state, event.node.hostname, event.cluster.name])).toEqual([
      ['node.added', null, 'ADDING', 'w1', 'ours'],
      ['node.changed', 'ADDING', 'READY_TO_INSTALL', 'w1', 'ours'],
      ['install.started', 'READY_TO_INSTALL', 'INSTALLING', 'w1', 'ours'],
      ['install.joined', 'INSTALLING', 'JOINED', 'w1', 'ours'],
    ]);
    const sequences = events(accepted).map((event) => event.sequence);
    expect([...sequences].sort((a, b) => a - b)).toEqual(sequences);
    expect(events(accepted)[3]?.reason).toMatchObject({ message: 'now JOINED' });
    for (const entry of accepted) {
      expect(signatureHolds(secret, entry.headers, entry.body)).toBe(true);
      expect(entry.headers['x-event-id']).toBe((JSON.parse(entry.body) as WebhookEvent).id);
      expect(entry.body).not.toContain(secret);
      // A body changed on the way fails the receiver's check.
      expect(signatureHolds(secret, entry.headers, entry.body.replace('"w1"', '"w9"'))).toBe(false);
      expect(signatureHolds('whsec_another', entry.headers, entry.body)).toBe(false);
    }
    expect(await store.behind()).toEqual([]);
    expect((await store.deliveries(endpoint.id, 10)).map((delivery) => [delivery.eventType, delivery.ok, delivery.statusCode])).toEqual([
      ['install.joined', true, 200],
      ['install.started', true, 200],
      ['node.changed', true, 200],
      ['node.added', true, 200],
    ]);
    await service.delete(endpoint.id);
  });

  it('loses nothing while the receiver is down: the failed event is tried again after a wait that doubles, and then everything arrives in order', async () => {
    const cluster = await clusterNamed('flaky');
    const { service, jobs } = feature();
    const { endpoint, secret } = await service.create({ clusterId: cluster, url }, 'admin');
    const node = await nodes.create({ clusterId: cluster, hostname: 'w2', status: 'ADDING' });
    answer = 503;
    await jobs.run(DELIVER_TASK, { endpointId: endpoint.id });
    expect(events(refused).map((event) => event.type)).toEqual(['node.added']);
    const failing = await store.find(endpoint.id);
    expect(failing).toMatchObject({ failures: 1, lastError: 'answered 503' });
    expect((failing?.retryAt?.getTime() ?? 0) - Date.now()).toBeGreaterThan(0);
    // Its retry is queued for then; meanwhile the sweep leaves it alone.
    expect(jobs.queued.at(-1)?.options?.runAt?.getTime()).toBe(failing?.retryAt?.getTime());
    expect(await store.behind()).toEqual([]);

    await dataSource.query(`UPDATE nodes SET status = 'READY_TO_INSTALL' WHERE id = $1`, [node.id]);
    await jobs.run(DELIVER_TASK, { endpointId: endpoint.id });
    expect((await store.find(endpoint.id))?.failures).toBe(2);
    expect(events(refused).map((event) => event.type)).toEqual(['node.added', 'node.added']);

    answer = 200;
    await dataSource.query(`UPDATE nodes SET status = 'INSTALLING' WHERE id = $1`, [node.id]);
    await jobs.run(DELIVER_TASK, { endpointId: endpoint.id });
    expect(events(accepted).map((event) => event.new_state)).toEqual(['ADDING', 'READY_TO_INSTALL', 'INSTALLING']);
    expect(accepted.every((entry) => signatureHolds(secret, entry.headers, entry.body))).toBe(true);
    expect(await store.find(endpoint.id)).toMatchObject({ failures: 0, failingSince: null, retryAt: null, lastError: null });
    await service.delete(endpoint.id);
  });

  it('waits for a change recorded before others but not yet committed, instead of skipping it', async () => {
    const cluster = await clusterNamed('racing');
    const { service, jobs } = feature();
    const { endpoint } = await service.create({ clusterId: cluster, url }, 'admin');
    const [first, second] = [await nodes.create({ clusterId: cluster, hostname: 'w3', status: 'ADDING' }), await nodes.create({ clusterId: cluster, hostname: 'w4', status: 'ADDING' })];
    await jobs.run(DELIVER_TASK, { endpointId: endpoint.id });
    accepted.length = 0;
    const slow = dataSource.createQueryRunner();
    await slow.connect();
    await slow.startTransaction();
    await slow.query(`UPDATE nodes SET status = 'READY_TO_INSTALL' WHERE id = $1`, [first.id]);
    await dataSource.query(`UPDATE nodes SET status = 'READY_TO_INSTALL' WHERE id = $1`, [second.id]);
    await jobs.run(DELIVER_TASK, { endpointId: endpoint.id });
    expect(accepted).toEqual([]);
    expect(jobs.queued.at(-1)?.options?.runAt).toBeInstanceOf(Date);
    await slow.commitTransaction();
    await slow.release();
    await jobs.run(DELIVER_TASK, { endpointId: endpoint.id });
    expect(events(accepted).map((event) => event.node.hostname)).toEqual(['w3', 'w4']);
    await service.delete(endpoint.id);
  });

  it('tells of a drain a PodDisruptionBudget blocks, naming it: once per blocked spell, again for another budget', async () => {
    const cluster = await clusterNamed('drains');
    const { service, dispatcher, jobs } = feature();
    const { endpoint } = await service.create({ clusterId: cluster, url }, 'admin');
    const node = await nodes.create({ clusterId: cluster, hostname: 'd1', status: 'REMOVING' });
    const runId = randomUUID();
    await dataSource.query(
      `INSERT INTO removal_runs (id, node_id, cluster_id, node_name, status, phase, options, requested_by) VALUES ($1, $2, $3, 'd1', 'RUNNING', 'DRAIN', '{}', 'operator')`,
      [runId, node.id, cluster],
    );
    const blockBy = (pdb: string | null, pod = 'shop/web-1') =>
      dataSource.query(`UPDATE removal_runs SET blocker = $2, blocker_since = now() WHERE id = $1`, [runId, pdb ? { code: 'removal.blocker.budget', params: { pdb, pod } } : null]);
    await blockBy('shop/web-budget');
    await blockBy('shop/web-budget', 'shop/web-2');
    await blockBy(null);
    await blockBy('shop/web-budget');
    await blockBy('shop/db-budget', 'shop/db-0');
    await dispatcher.queueBehind();
    await jobs.run(DELIVER_TASK, { endpointId: endpoint.id });
    const blocked = events(accepted).filter((event) => event.type === 'drain.blocked');
    expect(blocked.map((event) => [event.node.hostname, event.old_state, event.new_state, event.detail?.['pdb'], event.detail?.['pod'], event.detail?.['removal_run_id']])).toEqual([
      ['d1', 'REMOVING', 'REMOVING', 'shop/web-budget', 'shop/web-1', runId],
      ['d1', 'REMOVING', 'REMOVING', 'shop/web-budget', 'shop/web-1', runId],
      ['d1', 'REMOVING', 'REMOVING', 'shop/db-budget', 'shop/db-0', runId],
    ]);
    expect(blocked[0]?.reason).toMatchObject({ code: 'removal.blocker.budget', message: expect.stringContaining('shop/web-budget') });
    await service.delete(endpoint.id);
  });

  it('tells of each CSR pending too long once, with its node when there is a record of it, also when several processes look', async () => {
    const cluster = await clusterNamed('csrs');
    const { service, dispatcher, jobs } = feature();
    const { endpoint } = await service.create({ clusterId: cluster, url }, 'admin');
    const known = await nodes.create({ clusterId: cluster, hostname: 'w7', status: 'INSTALLING' });
    const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();
    const csr = (name: string, commonName: string, username: string, createdAt: string, state: CsrSummary['state'] = 'Pending') =>
      ({ name, username, createdAt, state, signerName: 'kubernetes.io/kube-apiserver-client-kubelet', request: { ok: true, request: { commonName } } }) as unknown as CsrSummary;
    const csrs: CsrSummary[] = [
      csr('csr-old', 'system:node:w7', 'system:bootstrap:abc123', minutesAgo(12)),
      csr('csr-stranger', 'system:node:nobody-knows', 'system:bootstrap:zzz999', minutesAgo(30)),
      csr('csr-young', 'system:node:w7', 'system:bootstrap:abc123', minutesAgo(2)),
      csr('csr-approved', 'system:node:w7', 'system:bootstrap:abc123', minutesAgo(40), 'Issued'),
    ];
    const watch = () => new CsrWaitWatch({ store, csrs: async (id) => (id === cluster ? csrs : []), pendingMs: 10 * 60_000, clock: new SystemClock(), logger });
    const [one, two] = [watch(), watch()];
    expect(await one.check()).toBe(2);
    expect(await two.check()).toBe(0);
    expect(await one.check()).toBe(0);
    await dispatcher.queueBehind();
    await jobs.run(DELIVER_TASK, { endpointId: endpoint.id });
    const pending = events(accepted).filter((event) => event.type === 'csr.pending');
    expect(pending.map((event) => [event.detail?.['csr'], event.node, event.new_state, event.detail?.['known_node'], event.detail?.['requester']])).toEqual([
      ['csr-old', { id: known.id, hostname: 'w7' }, 'INSTALLING', true, 'system:bootstrap:abc123'],
      ['csr-stranger', { id: null, hostname: 'nobody-knows' }, 'UNKNOWN', false, 'system:bootstrap:zzz999'],
    ]);
    // No number of the sequence was taken by the CSRs already recorded: a status change right after is delivered at once, not after a gap's wait.
    await dataSource.query(`UPDATE nodes SET status = 'INSTALL_FAILED' WHERE id = $1`, [known.id]);
    await jobs.run(DELIVER_TASK, { endpointId: endpoint.id });
    expect(events(accepted).at(-1)).toMatchObject({ type: 'install.failed', node: { hostname: 'w7' } });
    await service.delete(endpoint.id);
  });

  it('refuses a receiver at an address the policy refuses, and a URL that is not http(s); shows no secret after creation', async () => {
    const cluster = await clusterNamed('strict');
    const strict = feature(new ClusterAddressGuard());
    expect((await appErrorOf(strict.service.create({ clusterId: cluster, url }, 'admin'))).extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'input.url', problemCode: 'webhook.addressRefused' });
    expect((await appErrorOf(strict.service.create({ clusterId: cluster, url: 'https://169.254.169.254/latest' }, 'admin'))).extensions).toMatchObject({ problemCode: 'webhook.addressRefused', problemParams: { range: 'metadata' } });
    for (const bad of ['ftp://hooks.example.com/x', 'not a url', 'https://user:pw@hooks.example.com/']) {
      expect((await appErrorOf(strict.service.create({ clusterId: cluster, url: bad }, 'admin'))).extensions, bad).toMatchObject({ problemCode: 'webhook.badUrl' });
    }
    expect(await strict.service.list(cluster)).toEqual([]);
    const { endpoint, secret } = await feature().service.create({ clusterId: cluster, url }, 'admin');
    // What the API lists has neither the secret nor its sealed form.
    const listed = await strict.resolver.webhookEndpoints(cluster);
    expect(listed.map((shown) => shown.id)).toEqual([endpoint.id]);
    expect(Object.keys(listed[0] ?? {})).not.toContain('secretSealed');
    expect(JSON.stringify(listed)).not.toContain(secret);
  });
});

/**
 * What the API costs to run: the built API's resident memory (RSS, from /proc) and V8 heap (its
 * /metrics) idle on a fresh Postgres database, then with a kube-sim cluster of 1,000 Nodes
 * running 30 pods each registered and fully discovered (the API caches every scheduled pod of a
 * cluster it watches), then with 100 live `installProgress` subscriptions (each its own
 * graphql-ws connection) on top; beside a bare Node process holding what any such service holds
 * (express listening, one `pg` connection, same Node).
 *
 *   npx tsx bench/memory-at-size.ts [nodes=1000] [subscriptions=100] [podsPerNode=30]
 *
 * kube-sim runs in this process, so its memory is not the API's. Build the API first.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { type Client, createClient } from 'graphql-ws';
import pg from 'pg';
import WebSocket from 'ws';
import { type ApiWorld, rssOf, startApiWorld } from './support/api-world';
import { type BenchOptions, type Figure, isMain } from './support/row';
import { startSimCluster } from './support/sim-cluster';

const MB = 1e6;
const SETTLE_MS = 3000;

/** The row of `npm run bench`. */
export async function benchRows(options: BenchOptions): Promise<Figure[]> {
  const [nodes, subscriptions, podsPerNode] = options.smoke ? [20, 5, 2] : [1000, 100, 30];
  const result = await measureMemory(nodes, subscriptions, options.log, podsPerNode);
  const pods = (nodes * podsPerNode).toLocaleString('en-US');
  const baseline = { name: 'bare Node + express + pg', value: result.baselineRss / MB, measured: true };
  return [
    { name: 'API RSS idle', value: result.idleRss / MB, unit: 'MB', reference: baseline, better: 'lower' },
    {
      name: `API RSS with ${nodes} nodes and ${pods} pods discovered`,
      value: result.loadedRss / MB,
      unit: 'MB',
      reference: baseline,
      better: 'lower',
      goal: { on: 'value', atMost: 250, text: '≤ 250 MB' },
    },
    {
      name: `API RSS with ${nodes} nodes, ${pods} pods and ${subscriptions} live subscriptions`,
      value: result.subscribedRss / MB,
      unit: 'MB',
      reference: baseline,
      better: 'lower',
      goal: { on: 'value', atMost: 250, text: '≤ 250 MB' },
    },
    { name: `API V8 heap used with ${nodes} nodes and ${pods} pods`, value: result.loadedHeap / MB, unit: 'MB', reference: { name: 'API heap idle', value: result.idleHeap / MB, measured: true }, better: 'lower' },
  ];
}

/** A bare Node service: express listening on a loopback port and one pg connection to the same server. */
export async function baselineRss(databaseUrl: string): Promise<number> {
  const script = `
    const express = require('express');
    const pg = require('pg');
    const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
    client.connect().then(() => client.query('SELECT 1')).then(() => {
      const server = express().get('/', (_req, res) => res.send('ok')).listen(0, '127.0.0.1', () => console.log('ready'));
    });`;
  const child = spawn(process.execPath, ['-e', script], { env: { ...process.env, DATABASE_URL: databaseUrl }, stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    await once(createInterface({ input: child.stdout }), 'line');
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    return (await rssOf(child.pid ?? 0)).rss;
  } finally {
    child.kill('SIGTERM');
    await once(child, 'exit').catch(() => undefined);
  }
}

/** The API's V8 heap in use, from its /metrics. */
export async function heapUsed(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(/^nodejs_heap_size_used_bytes\s+(\S+)/m.exec(text)?.[1] ?? Number.NaN);
}

/** Milliseconds until the API's heap in use grew by less than 2 % over three seconds in a row. */
async function heapSettled(url: string): Promise<number> {
  const started = performance.now();
  let previous = await heapUsed(url);
  for (let calm = 0; calm < 3 && performance.now() - started < 300_000; ) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const now = await heapUsed(url);
    calm = now < previous * 1.02 ? calm + 1 : 0;
    previous = Math.max(previous, now);
  }
  return performance.now() - started;
}

/** `count` installProgress subscriptions on as many nodes of the cluster, each on its own connection, once each has its first message. */
async function subscribe(world: ApiWorld, clusterId: string, count: number): Promise<Client[]> {
  return subscribeInstallProgress(world.databaseUrl, world.api.url, world.token, clusterId, count);
}

/** `count` installProgress subscriptions on as many nodes of the cluster (by hostname), each on its own graphql-ws connection, once each has its first message. */
export async function subscribeInstallProgress(databaseUrl: string, apiUrl: string, token: string, clusterId: string, count: number): Promise<Client[]> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  const ids = (await db.query<{ id: string }>('SELECT id FROM nodes WHERE cluster_id = $1 ORDER BY hostname LIMIT $2', [clusterId, count]).finally(() => db.end())).rows.map((row) => row.id);
  const url = `${apiUrl.replace('http', 'ws')}/graphql`;
  const clients = ids.map(() => createClient({ url, webSocketImpl: WebSocket, lazy: false, connectionParams: { authorization: `Bearer ${token}` } }));
  await Promise.all(
    clients.map(
      (client, index) =>
        new Promise<void>((resolve, reject) => {
          client.subscribe({ query: 'subscription($n: ID!) { installProgress(nodeId: $n) { nodeId } }', variables: { n: ids[index] } }, { next: () => resolve(), error: reject, complete: () => undefined });
        }),
    ),
  );
  return clients;
}

export async function measureMemory(
  nodes: number,
  subscriptions: number,
  log: (line: string) => void,
  podsPerNode = 0,
): Promise<{ idleRss: number; loadedRss: number; subscribedRss: number; peakRss: number; idleHeap: number; loadedHeap: number; baselineRss: number }> {
  const world = await startApiWorld();
  try {
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const idle = await rssOf(world.api.pid);
    const idleHeap = await heapUsed(world.api.url);
    const cluster = await startSimCluster(world, nodes, log, `bench-${nodes}`, podsPerNode);
    try {
      // The pod list comes after the Nodes: wait until the heap stops growing, then let a garbage collection or two run.
      const podsListedMs = await heapSettled(world.api.url);
      log(`heap settled ${podsListedMs.toFixed(0)} ms after discovery (${nodes * podsPerNode} pods)`);
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS * 2));
      const loaded = await rssOf(world.api.pid);
      const loadedHeap = await heapUsed(world.api.url);
      const clients = await subscribe(world, cluster.clusterId, subscriptions);
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      const subscribed = await rssOf(world.api.pid);
      await Promise.all(clients.map((client) => client.dispose()));
      const baseline = await baselineRss(world.databaseUrl);
      log(
        `RSS: idle ${(idle.rss / MB).toFixed(0)} MB, with ${nodes} nodes ${(loaded.rss / MB).toFixed(0)} MB, + ${subscriptions} subscriptions ${(subscribed.rss / MB).toFixed(0)} MB (peak ${(subscribed.peak / MB).toFixed(0)} MB); ` +
          `heap ${(idleHeap / MB).toFixed(0)} → ${(loadedHeap / MB).toFixed(0)} MB; bare express + pg ${(baseline / MB).toFixed(0)} MB`,
      );
      return { idleRss: idle.rss, loadedRss: loaded.rss, subscribedRss: subscribed.rss, peakRss: subscribed.peak, idleHeap, loadedHeap, baselineRss: baseline };
    } finally {
      await cluster.stop();
    }
  } finally {
    await world.stop();
  }
}

if (isMain(import.meta.url)) {
  await measureMemory(Number(process.argv[2] ?? 1000), Number(process.argv[3] ?? 100), (line) => console.log(line), Number(process.argv[4] ?? 30));
}

import pino from 'pino';
import type { DataSource } from 'typeorm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CuttablePostgresPath, createTestDatabase, type TestDatabase } from '../../testing';
import { openDatabase } from '../data-source';
import { type JobEngine as Engine, type JobEngineOptions, JobEngine } from './job-engine';

const logger = pino({ level: 'silent' });

/** A promise and its resolver, to hold a job running until the test lets it go. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open = (): void => undefined;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

describe('the job engine on graphile-worker, against the real Postgres', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  const engines: Engine[] = [];

  beforeAll(async () => {
    database = await createTestDatabase('ccos_jobs');
    // The service's own migrations make the heartbeat table.
    dataSource = await openDatabase({ url: database.url });
  });
  afterEach(async () => {
    await Promise.all(engines.splice(0).map((engine) => engine.stop()));
    await dataSource.query('DELETE FROM graphile_worker._private_jobs');
    await dataSource.query('DELETE FROM job_worker_heartbeats');
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  async function engine(options: Partial<JobEngineOptions> = {}): Promise<Engine> {
    const made = new JobEngine({ databaseUrl: database.url, concurrency: 2, pollIntervalMs: 100, embedded: false, logger, heartbeatMs: 100, staleAfterMs: 1000, ...options });
    engines.push(made);
    await made.open();
    return made;
  }

  it('runs a queued job once; queued again under its key while it waits, it runs once with the last payload', async () => {
    const seen: unknown[] = [];
    const done = gate();
    const jobs = await engine();
    jobs.register('greet', async (payload) => {
      seen.push(payload);
      done.open();
    });
    await jobs.enqueue('greet', { name: 'first' }, { key: 'greet:one' });
    await jobs.enqueue('greet', { name: 'second' }, { key: 'greet:one' });
    await jobs.startWorkers();
    await done.promise;
    await expect.poll(async () => Number((await dataSource.query('SELECT count(*) AS n FROM graphile_worker.jobs'))[0].n)).toBe(0);
    expect(seen).toEqual([{ name: 'second' }]);
  });

  it('queued again under its key while it runs, runs once more afterwards, never alongside', async () => {
    const events: string[] = [];
    const first = gate();
    const jobs = await engine();
    jobs.register('provision', async (payload) => {
      events.push(`start ${String(payload['nodeId'])}`);
      if (!events.includes('end n1')) {
        await first.promise;
      }
      events.push(`end ${String(payload['nodeId'])}`);
    });
    await jobs.startWorkers();
    const again = () => jobs.enqueue('provision', { nodeId: 'n1' }, { key: 'provision:n1', queue: 'host:198.18.0.9:22' });
    await again();
    await expect.poll(() => events).toEqual(['start n1']);
    await again();
    await again();
    first.open();
    await expect.poll(() => events, { timeout: 10_000 }).toEqual(['start n1', 'end n1', 'start n1', 'end n1']);
  });

  it('never runs two jobs of one queue at once in one process, though it has workers free and both are waiting', async () => {
    const running = new Set<string>();
    const overlapping: string[] = [];
    let finished = 0;
    const jobs = await engine({ concurrency: 4 });
    jobs.register('touch', async (payload) => {
      const host = String(payload['host']);
      if (running.has(host)) {
        overlapping.push(host);
      }
      running.add(host);
      await new Promise((wake) => setTimeout(wake, 50));
      running.delete(host);
      finished += 1;
    });
    for (let index = 0; index < 8; index += 1) {
      await jobs.enqueue('touch', { host: `h${index % 2}` }, { queue: `host:h${index % 2}` });
    }
    await jobs.startWorkers();
    await expect.poll(() => finished, { timeout: 20_000 }).toBe(8);
    expect(overlapping).toEqual([]);
  });

  it('never runs two jobs of one queue at once, across two processes', async () => {
    const running = new Set<string>();
    let overlaps = 0;
    let finished = 0;
    const work = async (payload: Readonly<Record<string, unknown>>) => {
      const host = String(payload['host']);
      if (running.has(host)) {
        overlaps += 1;
      }
      running.add(host);
      await new Promise((wake) => setTimeout(wake, 30));
      running.delete(host);
      finished += 1;
    };
    // Both live all along: a worker counts as dead only after 10 s without a beat here (on a loaded
    // machine a spec worker once went a second without one, and its queue was unlocked under it).
    const [a, b] = [await engine({ staleAfterMs: 10_000 }), await engine({ staleAfterMs: 10_000 })];
    a.register('touch', work);
    b.register('touch', work);
    for (let index = 0; index < 12; index += 1) {
      const host = `h${index % 2}`;
      await a.enqueue('touch', { host }, { queue: `host:${host}` });
    }
    await Promise.all([a.startWorkers(), b.startWorkers()]);
    await expect.poll(() => finished, { timeout: 20_000 }).toBe(12);
    expect(overlaps).toBe(0);
  });

  it('leaves a job that used up its attempts failed, with its error, until it is retried', async () => {
    let failing = true;
    let succeeded = 0;
    const jobs = await engine();
    jobs.register('flaky', async () => {
      if (failing) {
        throw new Error('the host said no');
      }
      succeeded += 1;
    });
    await jobs.enqueue('flaky', { nodeId: 'n1' }, { key: 'flaky:n1', maxAttempts: 1 });
    await jobs.startWorkers();
    await expect.poll(async () => (await jobs.failedJobs()).length, { timeout: 10_000 }).toBe(1);
    const [failed] = await jobs.failedJobs();
    expect(failed).toMatchObject({ task: 'flaky', key: 'flaky:n1', payload: { nodeId: 'n1' }, attempts: 1, maxAttempts: 1, lastError: 'the host said no' });

    failing = false;
    expect(await jobs.retry('999999')).toBe(false);
    expect(await jobs.retry('not a number')).toBe(false);
    expect(await jobs.retry(failed?.id ?? '')).toBe(true);
    await expect.poll(() => succeeded, { timeout: 10_000 }).toBe(1);
    expect(await jobs.failedJobs()).toEqual([]);
  });

  it('unlocks, within seconds, the job of a worker that stopped beating, and another process runs it', async () => {
    const hung = gate();
    const started: string[] = [];
    // Killed with -9 in effect after its first beat: it beats no more and never releases its job or its queue.
    const dying = await engine({ concurrency: 1, heartbeatMs: 3_600_000 });
    dying.register('install', async () => {
      started.push('dying');
      await hung.promise;
    });
    await dying.enqueue('install', { runId: 'r1' }, { queue: 'host:h1' });
    await dying.startWorkers();
    await expect.poll(() => started).toEqual(['dying']);
    await dataSource.query(`UPDATE job_worker_heartbeats SET beat_at = now() - interval '1 minute'`);

    const survivor = await engine({ concurrency: 1 });
    survivor.register('install', async () => {
      started.push('survivor');
    });
    await survivor.startWorkers();
    // While its lock is younger than the stale time, nobody takes it.
    await dataSource.query(`UPDATE graphile_worker._private_jobs SET locked_at = now()`);
    expect(await survivor.unlockDeadWorkers()).toEqual([]);
    await dataSource.query(`UPDATE graphile_worker._private_jobs SET locked_at = now() - interval '5 seconds'`);
    await dataSource.query(`UPDATE graphile_worker._private_job_queues SET locked_at = now() - interval '5 seconds'`);
    await expect.poll(() => started, { timeout: 10_000 }).toEqual(['dying', 'survivor']);
    hung.open();
  });

  it('tells the job of a process another one declared dead that it lost it, at its next beat, and the process beats again; its end deletes nothing', async () => {
    const started: string[] = [];
    const otherRuns = gate();
    // Stalled (a blocked event loop, a paused VM) past the stale time: its beat and its locks look
    // old, and it looks for no more jobs (it fetched this one when it started).
    const stalled = await engine({ concurrency: 1, heartbeatMs: 3_600_000, pollIntervalMs: 3_600_000 });
    stalled.register('provision', async (_payload, { lost }) => {
      started.push('stalled');
      await new Promise((resolve) => lost.addEventListener('abort', resolve, { once: true }));
      started.push(`stalled lost it: ${String(lost.reason)}`);
    });
    await stalled.enqueue('provision', { nodeId: 'n4' }, { queue: 'host:h4' });
    await stalled.startWorkers();
    await expect.poll(() => started).toEqual(['stalled']);
    await dataSource.query(`UPDATE job_worker_heartbeats SET beat_at = now() - interval '1 minute'`);
    await dataSource.query(`UPDATE graphile_worker._private_jobs SET locked_at = now() - interval '1 minute'`);
    await dataSource.query(`UPDATE graphile_worker._private_job_queues SET locked_at = now() - interval '1 minute'`);

    const other = await engine({ concurrency: 1, heartbeatMs: 3_600_000 });
    other.register('provision', async () => {
      started.push('other');
      await otherRuns.promise;
    });
    await other.startWorkers();
    expect(await other.unlockDeadWorkers()).not.toEqual([]);
    await expect.poll(() => started, { timeout: 10_000 }).toEqual(['stalled', 'other']);

    await stalled.heartbeat();
    await expect.poll(() => started).toEqual(['stalled', 'other', 'stalled lost it: Error: another process took over this job: this one was silent past the stale time']);
    // Both processes' pools and workers beat again (the swept row is back).
    expect(await dataSource.query(`SELECT count(*)::int AS beating, count(*) FILTER (WHERE beat_at < now() - interval '10 seconds')::int AS stale FROM job_worker_heartbeats`)).toEqual([{ beating: 4, stale: 0 }]);
    // The stalled worker's run ended (its runner stops once that end is recorded), but the job is
    // the other's now: it is still there until that run ends.
    await stalled.stopWorkers();
    const jobsLeft = async () => Number((await dataSource.query('SELECT count(*) AS n FROM graphile_worker.jobs'))[0].n);
    expect(await jobsLeft()).toBe(1);
    otherRuns.open();
    await expect.poll(jobsLeft).toBe(0);
  });

  it('started again on a host, runs at once the jobs its dead predecessor held there; a live process\'s stay its own', async () => {
    const ran: string[] = [];
    const first = await engine();
    await first.enqueue('clean', { host: 'a' }, { queue: 'host:a' });
    await first.enqueue('clean', { host: 'b' }, { queue: 'host:b' });
    // As a process killed while it ran them would leave them: locked by its workers, whose last beats name its host and pid.
    const [host] = first.processName.split('#');
    await dataSource.query(`UPDATE graphile_worker._private_jobs SET locked_by = CASE WHEN payload->>'host' = 'a' THEN 'gone-worker' ELSE 'live-worker' END, locked_at = now()`);
    await dataSource.query(`INSERT INTO job_worker_heartbeats (worker_id, process, beat_at) VALUES ('gone-worker', $1, now()), ('live-worker', $2, now())`, [`${host}#4194301`, `${host}#${process.ppid}`]);
    const restarted = await engine({ staleAfterMs: 3_600_000 });
    restarted.register('clean', async (payload) => {
      ran.push(String(payload['host']));
    });
    await restarted.startWorkers();
    await expect.poll(() => ran, { timeout: 5000 }).toEqual(['a']);
    expect((await dataSource.query(`SELECT worker_id FROM job_worker_heartbeats WHERE worker_id IN ('gone-worker', 'live-worker')`)).map((row: { worker_id: string }) => row.worker_id)).toEqual(['live-worker']);
    await expect.poll(async () => (await restarted.counts()).running).toBe(1);
  });

  it('runs the jobs of long tasks in a pool of their own: a long job waiting never holds up a short one', async () => {
    const held = gate();
    const ran: string[] = [];
    const jobs = await engine({ concurrency: 1, longConcurrency: 1 });
    jobs.register('drain', async (payload) => {
      ran.push(`drain ${String(payload['node'])}`);
      await held.promise;
    }, { long: true });
    jobs.register('check', async (payload) => {
      ran.push(`check ${String(payload['node'])}`);
    });
    await jobs.enqueue('drain', { node: 'a' }, { queue: 'host:a' });
    await jobs.enqueue('drain', { node: 'b' }, { queue: 'host:b' });
    await jobs.startWorkers();
    await expect.poll(() => ran).toEqual(['drain a']);
    await jobs.enqueue('check', { node: 'c' }, { queue: 'host:c' });
    // One short worker, one long one: the check runs at once beside the held drain, the second drain waits for the first.
    await expect.poll(() => ran).toEqual(['drain a', 'check c']);
    held.open();
    await expect.poll(() => ran).toEqual(['drain a', 'check c', 'drain b']);
  });

  it('does not hold a shutdown past its grace for a job still running: the job is released and another process runs it', async () => {
    const hung = gate();
    const started: string[] = [];
    const stopping = await engine({ concurrency: 1 });
    stopping.register('clean', async () => {
      started.push('stopping');
      await hung.promise;
    });
    await stopping.enqueue('clean', { nodeId: 'n1' }, { queue: 'host:h3' });
    await stopping.startWorkers();
    await expect.poll(() => started).toEqual(['stopping']);
    const other = await engine({ concurrency: 1 });
    other.register('clean', async () => {
      started.push('other');
    });
    await other.startWorkers();

    const began = Date.now();
    await stopping.stopWorkers(300);
    expect(Date.now() - began).toBeLessThan(5000);
    await expect.poll(() => started, { timeout: 10_000 }).toEqual(['stopping', 'other']);
    hung.open();
  });

  it('opened and started while its database is cut, fails; asked again once it is back, it opens, starts and runs what was queued', async () => {
    const path = await CuttablePostgresPath.open();
    const cut = new JobEngine({ databaseUrl: path.urlOf(database.url), concurrency: 1, pollIntervalMs: 100, embedded: false, logger, heartbeatMs: 100, staleAfterMs: 1000 });
    try {
      const ran: unknown[] = [];
      cut.register('greet', async (payload) => {
        ran.push(payload);
      });
      path.sever();
      await expect(cut.open()).rejects.toThrow();
      await expect(cut.startWorkers()).rejects.toThrow();
      await expect(cut.enqueue('greet', { name: 'cut' })).rejects.toThrow();

      path.restore();
      await cut.enqueue('greet', { name: 'back' });
      await cut.startWorkers();
      await expect.poll(() => ran, { timeout: 10_000 }).toEqual([{ name: 'back' }]);
    } finally {
      await cut.stop();
      await path.close();
    }
  });

  it('keeps the job of a worker that still beats, however long it runs', async () => {
    const hung = gate();
    const started: string[] = [];
    const busy = await engine({ concurrency: 1 });
    busy.register('drain', async () => {
      started.push('busy');
      await hung.promise;
    });
    await busy.enqueue('drain', { runId: 'r2' }, { queue: 'host:h2' });
    await busy.startWorkers();
    await expect.poll(() => started).toEqual(['busy']);
    await dataSource.query(`UPDATE graphile_worker._private_jobs SET locked_at = now() - interval '1 hour'`);
    const other = await engine({ concurrency: 1 });
    other.register('drain', async () => {
      started.push('other');
    });
    await other.startWorkers();
    expect(await other.unlockDeadWorkers()).toEqual([]);
    hung.open();
    await expect.poll(async () => Number((await dataSource.query('SELECT count(*) AS n FROM graphile_worker.jobs'))[0].n)).toBe(0);
    expect(started).toEqual(['busy']);
  });
});

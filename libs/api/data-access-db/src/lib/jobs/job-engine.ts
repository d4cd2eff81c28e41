import { EventEmitter } from 'node:events';
import { hostname } from 'node:os';
import type { Logger as GraphileLogger, Runner, TaskList, WorkerEvents, WorkerUtils } from 'graphile-worker';
import pg from 'pg';
import type { Logger } from 'pino';

/** How a job is queued. */
export interface JobOptions {
  /**
   * At most one waiting job per key: queued again while it waits, it takes the new payload and
   * time; queued again while it runs, one more runs after it.
   */
  readonly key?: string;
  /** Jobs of one queue run one at a time, across every process of the service (one host's jobs). */
  readonly queue?: string;
  /** Attempts before the job is left failed (retried with exponential backoff until then). */
  readonly maxAttempts?: number;
  readonly runAt?: Date;
}

/** The queue of one host's jobs (by its address): they run one at a time, across every process. */
export function hostQueue(address: string): string {
  return `host:${address}`;
}

/** What a job's handler learns about its run. */
export interface JobContext {
  /** This attempt's number, from 1. */
  readonly attempt: number;
  readonly maxAttempts: number;
  /** Aborted when the process shuts down while the job runs. */
  readonly signal: AbortSignal | undefined;
  /**
   * Aborted when this process lost the job: another declared its workers dead (silent past the
   * stale time) and unlocked the job for others. Nothing more should be done for it here.
   */
  readonly lost: AbortSignal;
}

/** Does a job's work; throwing fails this attempt (its message is kept as the job's last error). */
export type JobHandler = (payload: Readonly<Record<string, unknown>>, context: JobContext) => Promise<void>;

/** Puts work on the durable queue. */
export interface JobQueue {
  enqueue(task: string, payload: Readonly<Record<string, unknown>>, options?: JobOptions): Promise<void>;
}

/** How a task's jobs are run. */
export interface TaskOptions {
  /**
   * Its jobs mostly wait (a drain held by a PodDisruptionBudget, a node's reboot): they run in a
   * pool of their own (`longConcurrency` at once), so that they never take every worker from the
   * short jobs (host checks, agent starts).
   */
  readonly long?: boolean;
}

/** A feature's view of the engine: it says what its tasks do, and queues them. */
export interface JobRegistry extends JobQueue {
  register(task: string, handler: JobHandler, options?: TaskOptions): void;
}

/** A job that used up its attempts: what it was, and why its last attempt failed. */
export interface FailedJob {
  readonly id: string;
  readonly task: string;
  readonly key: string | null;
  readonly queue: string | null;
  readonly payload: unknown;
  readonly attempts: number;
  readonly maxAttempts: number;
  readonly lastError: string | null;
  readonly createdAt: Date;
  readonly failedAt: Date;
}

export interface JobCounts {
  readonly waiting: number;
  readonly running: number;
  readonly failed: number;
}

export interface JobEngineOptions {
  readonly databaseUrl: string;
  /** Jobs one process runs at once, besides the long ones. */
  readonly concurrency: number;
  /** Jobs of long tasks one process runs at once (`TaskOptions.long`). Default 50. */
  readonly longConcurrency?: number;
  /** Attempts a job gets unless it is queued with its own number. Default 5. */
  readonly maxAttempts?: number;
  /** How often an idle worker looks for jobs no notification announced (unlocked ones, and every job on the embedded database, whose connections share one session and so no LISTEN/NOTIFY). */
  readonly pollIntervalMs: number;
  /** The embedded database (PGlite behind one socket): no prepared statements, few connections. */
  readonly embedded: boolean;
  readonly logger: Logger;
  /** How often this process says its workers are alive, and looks for workers that stopped saying so. Default 5 s. */
  readonly heartbeatMs?: number;
  /** A worker silent this long is dead and its jobs are unlocked for others. Default 20 s. */
  readonly staleAfterMs?: number;
}

/** graphile-worker's schema; the tables read here directly are those of 0.17 (pinned in package.json). */
const SCHEMA = 'graphile_worker';
const DEFAULT_MAX_ATTEMPTS = 5;

/**
 * Durable jobs in the service's own Postgres database, on graphile-worker (0.17): a job has a
 * task, a payload (never a secret: it is stored as it is), a key, a queue whose jobs run one at a
 * time, and retries with backoff; a job that used up its attempts stays, failed, until an ADMIN
 * retries it. graphile-worker unlocks the job of a worker that died without releasing it only
 * after four hours; here every process records its workers' heartbeats and unlocks, within
 * `staleAfterMs`, the jobs and queues of workers that stopped beating.
 */
export class JobEngine implements JobRegistry {
  readonly processName = `${hostname()}#${process.pid}`;
  private readonly handlers = new Map<string, { readonly handler: JobHandler; readonly long: boolean }>();
  private readonly pool: pg.Pool;
  private readonly events = new EventEmitter() as WorkerEvents;
  private readonly workerIds = new Set<string>();
  /** Workers whose heartbeat row this process wrote: a row of theirs that is gone was swept. */
  private readonly announced = new Set<string>();
  private utils: WorkerUtils | null = null;
  private runners: Runner[] = [];
  private timer: NodeJS.Timeout | null = null;
  private logger: GraphileLogger | null = null;
  private beating: Promise<void> = Promise.resolve();
  /** Aborted when another process declared this one's workers dead and took over their jobs. */
  private fence = new AbortController();
  private opening: Promise<void> | null = null;
  private starting: Promise<void> | null = null;

  constructor(private readonly options: JobEngineOptions) {
    this.pool = new pg.Pool({ connectionString: options.databaseUrl, max: options.embedded ? 3 : options.concurrency + 5 });
    const connectionFailed = (error: Error) => options.logger.warn({ err: error, component: 'jobs' }, 'a job database connection failed');
    this.pool.on('error', connectionFailed);
    this.pool.on('connect', (client) => client.on('error', connectionFailed));
    // graphile-worker 0.17 locks jobs and queues in the name of the worker pool (older ones, of each worker): both beat.
    this.events.on('pool:create', ({ workerPool }) => {
      this.workerIds.add(workerPool.id);
    });
    this.events.on('worker:create', ({ worker }) => {
      this.workerIds.add(worker.workerId);
    });
    this.events.on('job:failed', ({ job, error }) => {
      options.logger.error({ component: 'jobs', jobId: job.id, task: job.task_identifier, key: job.key, err: error }, 'a job failed its last attempt');
    });
  }

  /**
   * Brings the job tables up to date, once; queuing or reading jobs opens the engine too and waits
   * for it, so a process may open it in the background (on the embedded database graphile-worker's
   * first migration takes seconds of the one thread the database shares with the service).
   */
  open(): Promise<void> {
    // A failed open (the database cut meanwhile) is tried again by the next caller.
    this.opening ??= this.migrate().catch((error: unknown) => {
      this.opening = null;
      throw error;
    });
    return this.opening;
  }

  private async migrate(): Promise<void> {
    // Loaded here, not at the top: a process that never uses jobs does not pay for the library.
    const { Logger, makeWorkerUtils } = await import('graphile-worker');
    this.logger = graphileLogger(Logger, this.options.logger);
    const utils = await makeWorkerUtils({ pgPool: this.pool, noPreparedStatements: this.options.embedded, logger: this.logger });
    await utils.migrate();
    this.utils = utils;
  }

  /** Says what a task does; every task must be registered before {@link startWorkers}. */
  register(task: string, handler: JobHandler, options: TaskOptions = {}): void {
    if (this.runners.length > 0) {
      throw new Error(`job task ${task} registered after the workers started`);
    }
    this.handlers.set(task, { handler, long: options.long === true });
  }

  /** Starts this process's workers, its heartbeat and the sweep for dead workers' jobs. */
  startWorkers(): Promise<void> {
    this.starting ??= this.runWorkers().catch((error: unknown) => {
      this.starting = null;
      throw error;
    });
    return this.starting;
  }

  private async runWorkers(): Promise<void> {
    await this.open();
    const short: TaskList = {};
    const long: TaskList = {};
    for (const [task, { handler, long: isLong }] of this.handlers) {
      (isLong ? long : short)[task] = async (payload, helpers) => {
        const lost = this.fence.signal;
        await handler((payload ?? {}) as Record<string, unknown>, { attempt: helpers.job.attempts, maxAttempts: helpers.job.max_attempts, signal: helpers.abortSignal, lost });
        // A lost job's end is not this process's to record: graphile-worker deletes a completed job
        // by its id alone (the run another process started, or a newer run queued under its key,
        // would go with it), while a failure is recorded only by the worker holding the lock.
        lost.throwIfAborted();
      };
    }
    // graphile-worker fetches only the jobs of the tasks a pool knows: the two pools never take each other's.
    for (const [taskList, concurrency] of [[short, this.options.concurrency], [long, this.options.longConcurrency ?? 50]] as const) {
      if (Object.keys(taskList).length > 0) {
        this.runners.push(await this.startPool(taskList, concurrency));
      }
    }
    // A restart's predecessor on this host is known dead now: its jobs need not wait for the stale time.
    await this.unlockPredecessors().catch((error: unknown) => this.options.logger.warn({ err: error, component: 'jobs' }, 'could not unlock the jobs of this host\'s earlier processes'));
    // The workers run from here on: a failed first beat (the database cut) is the timer's to repeat.
    this.beating = this.beat().catch((error: unknown) => this.options.logger.warn({ err: error, component: 'jobs' }, 'job heartbeat failed'));
    this.timer = setInterval(() => {
      this.beating = this.beating.then(() => this.beatAndSweep());
    }, this.options.heartbeatMs ?? 5000);
    this.timer.unref();
    await this.beating;
  }

  private async startPool(taskList: TaskList, concurrency: number): Promise<Runner> {
    const { run } = await import('graphile-worker');
    return run({
      pgPool: this.pool,
      taskList,
      concurrency,
      pollInterval: this.options.pollIntervalMs,
      // One fetch (and one poll) for the pool's workers instead of one per worker: an idle
      // process with 10 workers polled the embedded database 20 times a second. One job per fetch:
      // graphile-worker's batched fetch takes several jobs of one queue at once and runs them side
      // by side, so two jobs of one host would run together.
      preset: { worker: { localQueue: { size: 1 } } },
      noHandleSignals: true,
      noPreparedStatements: this.options.embedded,
      ...(this.logger ? { logger: this.logger } : {}),
      events: this.events,
    });
  }

  async enqueue(task: string, payload: Readonly<Record<string, unknown>>, options: JobOptions = {}): Promise<void> {
    await this.open();
    await this.requireUtils().addJob(task, { ...payload }, {
      ...(options.key === undefined ? {} : { jobKey: options.key, jobKeyMode: 'replace' as const }),
      ...(options.queue === undefined ? {} : { queueName: options.queue }),
      ...(options.runAt === undefined ? {} : { runAt: options.runAt }),
      maxAttempts: options.maxAttempts ?? this.options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
    });
  }

  /** How many jobs wait (retries included), run now, and used up their attempts. */
  async counts(): Promise<JobCounts> {
    await this.open();
    const { rows } = await this.pool.query<JobCounts>(
      `SELECT count(*) FILTER (WHERE locked_at IS NULL AND attempts < max_attempts)::int AS waiting,
              count(*) FILTER (WHERE locked_at IS NOT NULL)::int AS running,
              count(*) FILTER (WHERE locked_at IS NULL AND attempts >= max_attempts)::int AS failed
         FROM ${SCHEMA}._private_jobs`,
    );
    return rows[0];
  }

  /** Jobs that used up their attempts, the latest first. */
  async failedJobs(limit = 200): Promise<FailedJob[]> {
    await this.open();
    const { rows } = await this.pool.query<FailedJob>(
      `SELECT jobs.id::text AS id, tasks.identifier AS task, jobs.key, queues.queue_name AS queue, jobs.payload, jobs.attempts,
              jobs.max_attempts AS "maxAttempts", jobs.last_error AS "lastError", jobs.created_at AS "createdAt", jobs.updated_at AS "failedAt"
         FROM ${SCHEMA}._private_jobs AS jobs
         JOIN ${SCHEMA}._private_tasks AS tasks ON tasks.id = jobs.task_id
         LEFT JOIN ${SCHEMA}._private_job_queues AS queues ON queues.id = jobs.job_queue_id
        WHERE jobs.attempts >= jobs.max_attempts AND jobs.locked_at IS NULL
        ORDER BY jobs.updated_at DESC LIMIT $1`,
      [limit],
    );
    return rows;
  }

  /**
   * Gives a failed job its attempts again and runs it now; false when no failed job has that id.
   * (graphile-worker's rescheduleJobs ignores `attempts: 0`, so the SQL function is called.)
   */
  async retry(jobId: string): Promise<boolean> {
    if (!/^\d{1,19}$/.test(jobId)) {
      return false;
    }
    await this.open();
    const { rows } = await this.pool.query(
      `SELECT id FROM ${SCHEMA}.reschedule_jobs(ARRAY(SELECT id FROM ${SCHEMA}.jobs WHERE id = $1::bigint AND attempts >= max_attempts), run_at := now(), attempts := 0)`,
      [jobId],
    );
    return rows.length > 0;
  }

  /**
   * Unlocks at once the jobs and queues of this host's processes that are gone: after a restart,
   * this process's predecessor (a process of this host name whose pid no longer runs). Another
   * host's workers, this host's live processes, and a predecessor that had this process's pid (a
   * container started again as pid 1) are left to the stale time. Returns the workers unlocked.
   */
  async unlockPredecessors(isRunning: (pid: number) => boolean = pidRunning): Promise<string[]> {
    const [host] = this.processName.split('#');
    const { rows } = await this.pool.query<{ worker_id: string; process: string }>(
      `SELECT worker_id, process FROM job_worker_heartbeats WHERE split_part(process, '#', 1) = $1 AND NOT (worker_id = ANY($2::text[]))`,
      [host, [...this.workerIds]],
    );
    const gone = rows
      .filter((row) => {
        const pid = Number(row.process.split('#')[1]);
        return Number.isInteger(pid) && pid > 0 && !isRunning(pid);
      })
      .map((row) => row.worker_id);
    if (gone.length > 0) {
      await this.requireUtils().forceUnlockWorkers(gone);
      await this.pool.query('DELETE FROM job_worker_heartbeats WHERE worker_id = ANY($1::text[])', [gone]);
      this.options.logger.warn({ component: 'jobs', workers: gone }, 'unlocked the jobs of this host\'s processes that are gone (a restart): they run again now');
    }
    return gone;
  }

  /**
   * Unlocks the jobs and queues of workers that have not beaten for `staleAfterMs` (or never did,
   * and locked their job that long ago): the workers of a process killed without a shutdown.
   * Returns their ids. Runs on every beat; callable directly (tests).
   */
  async unlockDeadWorkers(): Promise<string[]> {
    const staleSeconds = (this.options.staleAfterMs ?? 20_000) / 1000;
    const { rows } = await this.pool.query<{ worker_id: string }>(
      `SELECT locked.worker_id FROM (
          SELECT locked_by AS worker_id FROM ${SCHEMA}._private_jobs WHERE locked_by IS NOT NULL AND locked_at < now() - make_interval(secs => $1)
          UNION
          SELECT locked_by FROM ${SCHEMA}._private_job_queues WHERE locked_by IS NOT NULL AND locked_at < now() - make_interval(secs => $1)
        ) AS locked
        WHERE NOT EXISTS (SELECT 1 FROM job_worker_heartbeats beat WHERE beat.worker_id = locked.worker_id AND beat.beat_at >= now() - make_interval(secs => $1))`,
      [staleSeconds],
    );
    const dead = rows.map((row) => row.worker_id);
    if (dead.length > 0) {
      await this.requireUtils().forceUnlockWorkers(dead);
      await this.pool.query('DELETE FROM job_worker_heartbeats WHERE worker_id = ANY($1::text[])', [dead]);
      this.options.logger.warn({ component: 'jobs', workers: dead }, 'unlocked the jobs of workers that stopped beating');
    }
    return dead;
  }

  /**
   * Stops taking jobs and waits up to `graceMs` for the running ones; jobs still running then are
   * unlocked for another process (or this one's successor) to run again, so a shutdown is never
   * held by a job waiting on a slow host. Forgets this process's workers.
   */
  async stopWorkers(graceMs = 5000): Promise<void> {
    await this.starting?.catch(() => undefined);
    this.starting = null;
    if (this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
    await this.beating;
    const ids = [...this.workerIds];
    this.workerIds.clear();
    this.announced.clear();
    const runners = this.runners;
    this.runners = [];
    if (runners.length > 0) {
      let timer: NodeJS.Timeout | undefined;
      const stopped = await Promise.race([
        Promise.all(runners.map((runner) => runner.stop())).then(() => true),
        new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), graceMs))),
      ]);
      clearTimeout(timer);
      if (!stopped && ids.length > 0 && this.utils) {
        this.options.logger.warn({ component: 'jobs', workers: ids }, 'jobs still running at shutdown are released for another process to run again');
        await this.utils.forceUnlockWorkers(ids).catch(() => undefined);
      }
    }
    if (ids.length > 0) {
      await this.pool.query('DELETE FROM job_worker_heartbeats WHERE worker_id = ANY($1::text[])', [ids]).catch(() => undefined);
    }
  }

  /** Stops the workers, if they run, and closes the engine's connections. */
  async stop(): Promise<void> {
    await this.opening?.catch(() => undefined);
    await this.stopWorkers();
    await this.utils?.release();
    this.utils = null;
    await this.pool.end();
  }

  /** Beats now, as the timer does every `heartbeatMs` (callable directly: tests). */
  heartbeat(): Promise<void> {
    return this.beat();
  }

  private async beatAndSweep(): Promise<void> {
    try {
      await this.beat();
      await this.unlockDeadWorkers();
    } catch (error) {
      this.options.logger.warn({ err: error, component: 'jobs' }, 'job heartbeat failed');
    }
  }

  /**
   * Says this process's workers are alive. A worker whose heartbeat row is gone was declared dead
   * by another process's sweep (this one was silent past the stale time: a stalled event loop, a
   * paused VM), which unlocked its jobs for others to run: the jobs still running here are aborted
   * (their `lost` signal), so two processes do not go on with one job, and the workers beat again.
   */
  private async beat(): Promise<void> {
    const ids = [...this.workerIds];
    if (ids.length === 0) {
      return;
    }
    const { rows } = await this.pool.query<{ worker_id: string }>('UPDATE job_worker_heartbeats SET beat_at = now() WHERE worker_id = ANY($1::text[]) RETURNING worker_id', [ids]);
    if (rows.length === ids.length) {
      return;
    }
    const beating = new Set(rows.map((row) => row.worker_id));
    const missing = ids.filter((id) => !beating.has(id));
    const swept = missing.filter((id) => this.announced.has(id));
    if (swept.length > 0) {
      this.options.logger.error(
        { component: 'jobs', workers: swept, staleAfterMs: this.options.staleAfterMs ?? 20_000 },
        'this process was silent past the stale time and another took over its jobs: the jobs still running here are aborted',
      );
      this.fence.abort(new Error('another process took over this job: this one was silent past the stale time'));
      this.fence = new AbortController();
    }
    await this.pool.query(
      `INSERT INTO job_worker_heartbeats (worker_id, process, beat_at) SELECT id, $2, now() FROM unnest($1::text[]) AS id
       ON CONFLICT (worker_id) DO UPDATE SET beat_at = now()`,
      [missing, this.processName],
    );
    missing.forEach((id) => this.announced.add(id));
  }

  private requireUtils(): WorkerUtils {
    if (!this.utils) {
      throw new Error('the job engine is not open');
    }
    return this.utils;
  }
}

/** Whether a process with this pid runs on this host (one of another user counts). */
function pidRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * graphile-worker's advice, at every start, to fetch as many jobs at once as the process runs: it
 * would break per-host serialisation (see `localQueue` above), so it is routine here.
 */
const SINGLE_JOB_FETCH_WARNING = 'Your job batch size';

/** graphile-worker's log lines into the service's log (its routine lines at debug). */
function graphileLogger(LoggerClass: typeof GraphileLogger, logger: Logger): GraphileLogger {
  return new LoggerClass(() => (level, message, meta) => {
    const fields = { component: 'jobs', ...(meta ?? {}) };
    if (level === 'error') {
      logger.error(fields, message);
    } else if (level === 'warning' && !message.startsWith(SINGLE_JOB_FETCH_WARNING)) {
      logger.warn(fields, message);
    } else {
      logger.debug(fields, message);
    }
  });
}

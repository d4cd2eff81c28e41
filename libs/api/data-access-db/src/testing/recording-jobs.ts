import type { JobContext, JobHandler, JobOptions, JobRegistry, TaskOptions } from '../lib/jobs/job-engine';

/** A job queued with {@link RecordingJobs}. */
export interface QueuedJob {
  readonly task: string;
  readonly payload: Readonly<Record<string, unknown>>;
  readonly options: JobOptions | undefined;
}

/**
 * The job engine as a feature sees it in a spec: the handlers it registers and what it queues, run
 * when the spec says, or (`runWhenQueued`) at once in the background, as by a worker always free.
 */
export class RecordingJobs implements JobRegistry {
  readonly handlers = new Map<string, JobHandler>();
  /** The tasks registered as long (their own pool in the engine). */
  readonly longTasks = new Set<string>();
  readonly queued: QueuedJob[] = [];
  /** Errors of jobs run in the background (`runWhenQueued`). */
  readonly failures: unknown[] = [];

  constructor(private readonly options: { readonly runWhenQueued?: boolean } = {}) {}

  register(task: string, handler: JobHandler, options: TaskOptions = {}): void {
    this.handlers.set(task, handler);
    if (options.long) {
      this.longTasks.add(task);
    }
  }

  async enqueue(task: string, payload: Readonly<Record<string, unknown>>, options?: JobOptions): Promise<void> {
    this.queued.push({ task, payload, options });
    if (this.options.runWhenQueued) {
      void this.run(task, payload).catch((error: unknown) => this.failures.push(error));
    }
  }

  /**
   * Runs a job as one worker's attempt would (the first, not lost, unless `context` says otherwise):
   * the last one queued of `task` that `which` picks, or `payload` as given.
   */
  async run(task: string, which: ((job: QueuedJob) => boolean) | Readonly<Record<string, unknown>>, context: Partial<Pick<JobContext, 'attempt' | 'lost' | 'signal'>> = {}): Promise<void> {
    const payload = typeof which === 'function' ? this.queued.findLast((job) => job.task === task && which(job))?.payload : which;
    if (!payload) {
      throw new Error(`no ${task} job is queued that the spec picked`);
    }
    const handler = this.handlers.get(task);
    if (!handler) {
      throw new Error(`no handler is registered for ${task}`);
    }
    const attempt = context.attempt ?? 1;
    await handler(payload, { attempt, maxAttempts: attempt, signal: context.signal, lost: context.lost ?? new AbortController().signal });
  }
}

import type { JobHandler, JobOptions, JobRegistry } from '../lib/jobs/job-engine';

/** A job queued with {@link RecordingJobs}. */
export interface QueuedJob {
  readonly task: string;
  readonly payload: Readonly<Record<string, unknown>>;
  readonly options: JobOptions | undefined;
}

/** The job engine as a feature sees it in a spec: the handlers it registers and what it queues, run when the spec says. */
export class RecordingJobs implements JobRegistry {
  readonly handlers = new Map<string, JobHandler>();
  readonly queued: QueuedJob[] = [];

  register(task: string, handler: JobHandler): void {
    this.handlers.set(task, handler);
  }

  async enqueue(task: string, payload: Readonly<Record<string, unknown>>, options?: JobOptions): Promise<void> {
    this.queued.push({ task, payload, options });
  }

  /** Runs a job as one worker's single attempt would: the last one queued of `task` that `which` picks, or `payload` as given. */
  async run(task: string, which: ((job: QueuedJob) => boolean) | Readonly<Record<string, unknown>>): Promise<void> {
    const payload = typeof which === 'function' ? this.queued.findLast((job) => job.task === task && which(job))?.payload : which;
    if (!payload) {
      throw new Error(`no ${task} job is queued that the spec picked`);
    }
    const handler = this.handlers.get(task);
    if (!handler) {
      throw new Error(`no handler is registered for ${task}`);
    }
    await handler(payload, { attempt: 1, maxAttempts: 1, signal: undefined, lost: new AbortController().signal });
  }
}

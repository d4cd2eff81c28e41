/**
 * Queues a feature's periodic jobs every `intervalMs` (health checks, inspections, remediation):
 * every replica does, and the jobs' keys keep one waiting per subject. A round that fails is
 * reported and the next one runs anyway; an interval of 0 or less queues nothing.
 */
export class PeriodicQueueing {
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(
    private readonly intervalMs: number,
    private readonly queueAll: () => Promise<unknown>,
    private readonly failed: (error: unknown) => void,
  ) {}

  start(): void {
    if (this.timer !== null || this.intervalMs <= 0) {
      return;
    }
    this.timer = setInterval(() => {
      this.queueAll().catch(this.failed);
    }, this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }
}

/**
 * A controller's work queue: keys marked dirty are processed once each, after `delayMs` (0 = on the
 * next turn of the event loop), never inside the write that marked them — like an informer-fed
 * controller reacting shortly after a change. `idle()` resolves when nothing is left to do.
 */
export class WorkQueue {
  private readonly dirty = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private waiters: (() => void)[] = [];
  private stopped = false;

  constructor(
    private readonly process: (key: string) => void,
    private readonly delayMs: number,
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {}

  add(key: string): void {
    if (this.stopped) {
      return;
    }
    this.dirty.add(key);
    if (!this.timer) {
      this.timer = setTimeout(() => this.flush(), this.delayMs);
      this.timer.unref();
    }
  }

  /** Processes every dirty key now (and whatever they mark dirty in turn, on later turns). */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const keys = [...this.dirty];
    this.dirty.clear();
    for (const key of keys) {
      try {
        this.process(key);
      } catch (error) {
        this.onError(error);
      }
    }
    if (this.dirty.size === 0 && !this.timer) {
      const waiters = this.waiters;
      this.waiters = [];
      waiters.forEach((resolve) => resolve());
    }
  }

  /** Whether work is waiting. */
  get busy(): boolean {
    return this.dirty.size > 0 || this.timer !== undefined;
  }

  /** Resolves once the queue is empty. */
  idle(): Promise<void> {
    if (this.dirty.size === 0 && !this.timer) {
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.dirty.clear();
    const waiters = this.waiters;
    this.waiters = [];
    waiters.forEach((resolve) => resolve());
  }
}

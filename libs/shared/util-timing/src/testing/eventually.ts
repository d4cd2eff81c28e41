/** How {@link eventually} waits, and what it says when it gives up. */
export interface EventuallyOptions {
  /** Default 5000. */
  readonly timeoutMs?: number;
  /** Named in the failure. Default "condition". */
  readonly what?: string;
  /** Default 20. */
  readonly intervalMs?: number;
  /**
   * Whether an error `check` throws means "not yet" (asked again; the last one is named if it
   * times out) rather than a failure that ends the wait at once. Default: none is.
   */
  readonly tolerate?: (error: unknown) => boolean;
  /** Appended to the failure: what the processes under test said, the state last seen. */
  readonly context?: () => string | Promise<string>;
}

/**
 * The one wait of the tests: polls `check` until it returns something other than undefined,
 * null or false and returns that, or fails naming `what` once `timeoutMs` has passed. Waiting for
 * a state this way (never sleeping a fixed time) keeps a test fast on an idle machine and correct
 * on a busy one.
 */
export async function eventually<T>(check: () => T | undefined | null | false | Promise<T | undefined | null | false>, timeoutMs?: number, what?: string, intervalMs?: number): Promise<T>;
export async function eventually<T>(check: () => T | undefined | null | false | Promise<T | undefined | null | false>, options: EventuallyOptions): Promise<T>;
export async function eventually<T>(
  check: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  timeoutOrOptions: number | EventuallyOptions = {},
  what?: string,
  intervalMs?: number,
): Promise<T> {
  const options: EventuallyOptions = typeof timeoutOrOptions === 'number' ? { timeoutMs: timeoutOrOptions, what, intervalMs } : timeoutOrOptions;
  const timeoutMs = options.timeoutMs ?? 5000;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown = null;
  for (;;) {
    let value: T | undefined | null | false;
    try {
      value = await check();
    } catch (error) {
      if (!options.tolerate?.(error)) {
        throw error;
      }
      lastError = error;
      value = undefined;
    }
    if (value !== undefined && value !== null && value !== false) {
      return value;
    }
    if (Date.now() > deadline) {
      const last = lastError === null ? '' : ` (last error: ${lastError instanceof Error ? lastError.message : String(lastError)})`;
      const context = options.context ? `\n${await options.context()}` : '';
      throw new Error(`${options.what ?? 'condition'} not met within ${timeoutMs} ms${last}${context}`);
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 20));
  }
}

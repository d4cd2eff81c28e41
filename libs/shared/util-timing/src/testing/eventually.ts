/**
 * The one wait of the tests: polls `check` until it returns something other than undefined and
 * returns that, or fails naming `what` once `timeoutMs` has passed. Waiting for a state this way
 * (never sleeping a fixed time) keeps a test fast on an idle machine and correct on a busy one.
 */
export async function eventually<T>(check: () => T | undefined | Promise<T | undefined>, timeoutMs = 5000, what = 'condition', intervalMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) {
      return value;
    }
    if (Date.now() > deadline) {
      throw new Error(`${what} not met within ${timeoutMs} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

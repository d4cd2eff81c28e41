export { Backoff, DOWNLOAD_BACKOFF, EVENT_BACKOFF, backoffDelayMs, type BackoffPolicy } from './lib/backoff';
export { SystemClock, type Clock } from './lib/clock';

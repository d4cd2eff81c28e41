/**
 * The machine-wide lab lock now lives with the lab (every lab start takes it
 * while it allocates); tests that still hold it around a whole file import
 * it from here as before.
 */
export { LAB_LOCK_PATH, LAB_LOCK_TIMEOUT_MS, acquireLabLock, type LabLockHolder, type LabLockOptions } from '@ccos/tools/lab';

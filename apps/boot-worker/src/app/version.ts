// Replaced by the build (esbuild --define); absent when run from source (tests).
declare const __BOOT_WORKER_VERSION__: string | undefined;
declare const __BOOT_WORKER_COMMIT__: string | undefined;

/** The agent's version, e.g. `0.1.0+3f2a9c1`. */
export const AGENT_VERSION: string = typeof __BOOT_WORKER_VERSION__ === 'string' ? __BOOT_WORKER_VERSION__ : '0.0.0-dev';
export const AGENT_COMMIT: string = typeof __BOOT_WORKER_COMMIT__ === 'string' ? __BOOT_WORKER_COMMIT__ : 'unknown';

import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';

/**
 * Opt-in CPU profile of this process: the folder to write `<command>-<pid>.cpuprofile` to
 * (Chrome DevTools' format). An environment variable rather than `--cpu-prof`, because a
 * single executable application ignores Node's options in NODE_OPTIONS.
 */
export const CPU_PROFILE_ENV = 'BOOT_WORKER_CPU_PROFILE';

/** Starts profiling when `CPU_PROFILE_ENV` names a folder; the returned function writes the profile. */
export async function startCpuProfile(command: string, env: NodeJS.ProcessEnv = process.env): Promise<() => Promise<void>> {
  const folder = env[CPU_PROFILE_ENV];
  if (!folder) {
    return async () => undefined;
  }
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return async () => {
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, `${command}-${process.pid}.cpuprofile`), JSON.stringify(profile));
  };
}

#!/usr/bin/env node
// `npm start`: builds the API, the console and the agent if needed (Nx caches the builds), then runs
// the API, which serves the console at / and uses the embedded database unless
// DATABASE_URL is set.
import { spawn, spawnSync } from 'node:child_process';

const env = { ...process.env, NX_DAEMON: 'false', NX_TUI: 'false', NX_NO_CLOUD: 'true' };
const build = spawnSync('npx', ['nx', 'run-many', '-t', 'build', '-p', 'api', 'console', 'graphiql', 'boot-worker', '--exclude-task-dependencies', '--outputStyle=static'], {
  stdio: 'inherit',
  env,
});
if (build.status !== 0) {
  process.exit(build.status ?? 1);
}
const api = spawn(process.execPath, ['--enable-source-maps', 'dist/apps/api/main.js'], { stdio: 'inherit', env: process.env });
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => api.kill(signal));
}
api.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));

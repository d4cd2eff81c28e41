import { startLab } from '@ccos/tools/lab';

/**
 * Brings up 20 lab hosts and prints how long it took (and the teardown).
 * Run as root: `npx tsx bench/lab-up.ts [hosts]`.
 */
const hosts = Number(process.argv[2] ?? 20);
const started = performance.now();
const lab = await startLab({ hosts });
const up = performance.now() - started;
const stopStarted = performance.now();
await lab.stop();
const down = performance.now() - stopStarted;
process.stdout.write(`lab up: ${hosts} hosts in ${(up / 1000).toFixed(2)} s (${(up / hosts).toFixed(0)} ms/host); down in ${(down / 1000).toFixed(2)} s\n`);

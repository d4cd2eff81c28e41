import { parseCli, USAGE } from './app/cli-args';
import { startCpuProfile } from './app/cpu-profile';
import { runAgent } from './app/run-agent';
import { startAgent } from './app/start-agent';
import { stopAgent } from './app/stop-agent';
import { AGENT_COMMIT, AGENT_VERSION } from './app/version';

/** boot-worker: the ccos-scaler agent that turns a fresh host into a worker node. */
async function main(argv: readonly string[]): Promise<number> {
  const cli = parseCli(argv);
  if ('error' in cli) {
    process.stderr.write(`boot-worker: ${cli.error}\n${USAGE}\n`);
    return 2;
  }
  switch (cli.command) {
    case 'help':
      process.stdout.write(`${USAGE}\n`);
      return 0;
    case 'version':
      process.stdout.write(cli.json
        ? `${JSON.stringify({ version: AGENT_VERSION, commit: AGENT_COMMIT, node: process.version })}\n`
        : `boot-worker ${AGENT_VERSION}\n`);
      return 0;
    case 'start':
      return startAgent(cli.config);
    case 'stop':
      return stopAgent(cli.config, cli.graceSeconds);
    case 'run':
      return runAgent(cli.config);
  }
}

const argv = process.argv.slice(2);
startCpuProfile(argv[0] ?? 'none').then(async (writeCpuProfile) => {
  const code = await main(argv);
  await writeCpuProfile();
  process.exit(code);
}).catch((error: unknown) => {
  process.stderr.write(`boot-worker: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
  process.exit(1);
});

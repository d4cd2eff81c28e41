import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { startVipServices, type VipServicesConfig } from './vip-services';

/**
 * The lab daemon the CLI leaves running after `up`: it holds the VIP
 * services (machine config server, API forward) until `down` sends SIGTERM.
 * Bundled at `up` time and run as `node lab-daemon.cjs <config.json> <pidfile>`.
 */
async function main(configFile: string, pidFile: string): Promise<void> {
  const config = JSON.parse(readFileSync(configFile, 'utf8')) as VipServicesConfig;
  const services = await startVipServices(config);
  const stop = async () => {
    await services.stop();
    rmSync(pidFile, { force: true });
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
  writeFileSync(pidFile, `${process.pid}\n`);
  process.stdout.write(`ccos-lab daemon ${process.pid}: machine config server and API forward on ${config.vip}\n`);
}

const [configFile, pidFile] = process.argv.slice(2);
if (configFile === undefined || pidFile === undefined) {
  process.stderr.write('usage: lab-daemon <config.json> <pidfile>\n');
  process.exit(2);
}
main(configFile, pidFile).catch((error: unknown) => {
  process.stderr.write(`ccos-lab daemon failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
  process.exit(1);
});

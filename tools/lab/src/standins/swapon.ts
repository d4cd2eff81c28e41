import './stdout-pipe';
import { readFaults } from './host-state';

/**
 * `swapon` stand-in: no swap unless the lab turned the host's `swap` fault
 * on, in which case one partition is listed as real `swapon` would.
 */
const SWAP_DEVICE = { name: '/dev/dm-1', type: 'partition', size: '4G', used: '0B', prio: '-2', kib: 4194300 };

function main(args: readonly string[]): number {
  const swapOn = readFaults().swap === true;
  if (args.includes('--show') || args.some((arg) => arg.startsWith('--show='))) {
    if (swapOn) {
      if (!args.includes('--noheadings')) {
        process.stdout.write('NAME      TYPE      SIZE USED PRIO\n');
      }
      const d = SWAP_DEVICE;
      process.stdout.write(`${d.name} ${d.type}   ${d.size}   ${d.used}   ${d.prio}\n`);
    }
    return 0;
  }
  if (args.includes('-s') || args.includes('--summary')) {
    if (swapOn) {
      process.stdout.write('Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n');
      process.stdout.write(`${SWAP_DEVICE.name}                               partition\t${SWAP_DEVICE.kib}\t\t0\t\t-2\n`);
    }
    return 0;
  }
  if (args.includes('-a') || args.includes('--all')) {
    // Nothing in the host's fstab to turn on.
    return 0;
  }
  if (args.length === 0) {
    process.stderr.write('Usage:\n swapon [options] [<spec>]\n');
    return 1;
  }
  process.stderr.write(`swapon: ${args[args.length - 1]}: lab hosts have no swap devices\n`);
  return 1;
}

process.exitCode = main(process.argv.slice(2));

import './stdout-pipe';
import { updateFaults } from './host-state';

/** `swapoff` stand-in: `swapoff -a` turns the host's fake swap off. */
function main(args: readonly string[]): number {
  if (args.includes('-a') || args.includes('--all')) {
    updateFaults({ swap: false });
    return 0;
  }
  if (args.length === 0) {
    process.stderr.write('Usage:\n swapoff [options] [<spec>]\n');
    return 1;
  }
  updateFaults({ swap: false });
  return 0;
}

process.exitCode = main(process.argv.slice(2));

import './stdout-pipe';
import { basename } from 'node:path';

/**
 * Stand-in for the release binaries the agent downloads but never runs for
 * real (`oc`, `hyperkube`, `kube-apiserver`, ...): each answers its version
 * query like the real one and refuses real work.
 */
const KUBE_VERSION = 'v1.25.4';
const RELEASE = '4.12.0';

function main(name: string, args: readonly string[]): number {
  const asksVersion = args.includes('--version') || args[0] === 'version' || args.includes('version');
  if (!asksVersion) {
    process.stderr.write(`${name}: lab stand-in; only the version query is implemented\n`);
    return 1;
  }
  switch (name) {
    case 'oc':
      process.stdout.write(`Client Version: ${RELEASE}\nKustomize Version: v4.5.7\n`);
      return 0;
    case 'ignition':
      process.stdout.write('Ignition 2.14.0\n');
      return 0;
    case 'coreos-installer':
      process.stdout.write('coreos-installer 0.16.1\n');
      return 0;
    default:
      process.stdout.write(`Kubernetes ${KUBE_VERSION}\n`);
      return 0;
  }
}

process.exitCode = main(basename(process.argv[1] ?? 'release-binary'), process.argv.slice(2));

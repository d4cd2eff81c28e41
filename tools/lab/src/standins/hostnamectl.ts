import './stdout-pipe';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { onHost } from './host-state';

/**
 * `hostnamectl` stand-in: `status`, `hostname`, `set-hostname NAME` (writes
 * the host's /etc/hostname and sets the name of its UTS namespace).
 */
function main(args: readonly string[]): number {
  const words = args.filter((arg) => !arg.startsWith('-'));
  const command = words[0] ?? 'status';
  switch (command) {
    case 'status':
      process.stdout.write(status());
      return 0;
    case 'hostname':
      if (words[1] === undefined) {
        process.stdout.write(`${hostname()}\n`);
        return 0;
      }
      return setHostname(words[1]);
    case 'set-hostname':
      if (words[1] === undefined) {
        process.stderr.write('Too few arguments.\n');
        return 1;
      }
      return setHostname(words[1]);
    default:
      process.stderr.write(`Unknown command verb '${command}'.\n`);
      return 1;
  }
}

function setHostname(name: string): number {
  if (!/^[a-z0-9]([-a-z0-9.]{0,61}[a-z0-9])?$/i.test(name)) {
    process.stderr.write(`Invalid hostname '${name}'\n`);
    return 1;
  }
  writeFileSync(onHost('/etc/hostname'), `${name}\n`);
  execFileSync('hostname', [name]);
  return 0;
}

function status(): string {
  const machineId = readText('/etc/machine-id');
  const pretty = /^PRETTY_NAME="?([^"\n]*)"?/m.exec(readText('/etc/os-release'))?.[1] ?? 'Linux';
  return [
    ` Static hostname: ${readText('/etc/hostname') || hostname()}`,
    '       Icon name: computer-vm',
    '         Chassis: vm',
    `      Machine ID: ${machineId}`,
    `Operating System: ${pretty}`,
    '          Kernel: Linux',
    '    Architecture: x86-64',
    '',
  ].join('\n');
}

function readText(path: string): string {
  try {
    return readFileSync(onHost(path), 'utf8').trim();
  } catch {
    return '';
  }
}

process.exitCode = main(process.argv.slice(2));

import './stdout-pipe';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { STANDIN_FILES, onHost, readJson, statePath, writeJson } from './host-state';

/**
 * `sysctl` stand-in. Kernel parameters such as `vm.swappiness` are global to
 * the machine, so a lab host must never write them: writes are recorded per
 * host and reads return the recorded value, else the machine's.
 */
type Values = Record<string, string>;

const valuesFile = statePath(STANDIN_FILES.sysctl);

function main(args: readonly string[]): number {
  const quiet = args.includes('-q') || args.includes('--quiet');
  const valueOnly = args.includes('-n') || args.includes('--values');
  if (args.includes('--system')) {
    return applyFiles(systemFiles(), quiet);
  }
  const loadIndex = args.findIndex((arg) => arg === '-p' || arg === '--load' || arg.startsWith('--load='));
  if (loadIndex >= 0) {
    const arg = args[loadIndex] ?? '';
    const file = arg.startsWith('--load=') ? arg.slice('--load='.length) : args[loadIndex + 1] ?? '/etc/sysctl.conf';
    return applyFiles([file], quiet);
  }
  if (args.includes('-a') || args.includes('--all')) {
    for (const [key, value] of Object.entries(readJson<Values>(valuesFile, {}))) {
      process.stdout.write(`${key} = ${value}\n`);
    }
    return 0;
  }
  const write = args.includes('-w') || args.includes('--write');
  let status = 0;
  for (const arg of args.filter((a) => !a.startsWith('-'))) {
    const eq = arg.indexOf('=');
    if (eq > 0 || write) {
      if (eq <= 0) {
        process.stderr.write(`sysctl: "${arg}" must be of the form name=value\n`);
        status = 1;
        continue;
      }
      const key = normalise(arg.slice(0, eq));
      const value = arg.slice(eq + 1).trim();
      if (!exists(key)) {
        process.stderr.write(`sysctl: cannot stat /proc/sys/${key.replaceAll('.', '/')}: No such file or directory\n`);
        status = 255;
        continue;
      }
      record({ [key]: value });
      if (!quiet) {
        process.stdout.write(`${key} = ${value}\n`);
      }
    } else {
      const key = normalise(arg);
      const value = read(key);
      if (value === undefined) {
        process.stderr.write(`sysctl: cannot stat /proc/sys/${key.replaceAll('.', '/')}: No such file or directory\n`);
        status = 255;
        continue;
      }
      process.stdout.write(valueOnly ? `${value}\n` : `${key} = ${value}\n`);
    }
  }
  return status;
}

function normalise(key: string): string {
  return key.trim().replaceAll('/', '.');
}

function exists(key: string): boolean {
  try {
    readFileSync(`/proc/sys/${key.replaceAll('.', '/')}`);
    return true;
  } catch {
    return false;
  }
}

function read(key: string): string | undefined {
  const recorded = readJson<Values>(valuesFile, {})[key];
  if (recorded !== undefined) {
    return recorded;
  }
  try {
    return readFileSync(`/proc/sys/${key.replaceAll('.', '/')}`, 'utf8').trim().replace(/\s+/g, '\t');
  } catch {
    return undefined;
  }
}

function record(values: Values): void {
  writeJson(valuesFile, { ...readJson<Values>(valuesFile, {}), ...values });
}

function systemFiles(): string[] {
  const files: string[] = [];
  for (const dir of ['/etc/sysctl.d', '/run/sysctl.d']) {
    try {
      files.push(...readdirSync(onHost(dir)).filter((name) => name.endsWith('.conf')).sort().map((name) => join(dir, name)));
    } catch {
      // No such folder on this host.
    }
  }
  files.push('/etc/sysctl.conf');
  return files;
}

function applyFiles(files: readonly string[], quiet: boolean): number {
  const values: Values = {};
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(onHost(file), 'utf8');
    } catch {
      continue;
    }
    if (!quiet) {
      process.stdout.write(`* Applying ${file} ...\n`);
    }
    for (const line of text.split('\n')) {
      const trimmed = line.trim();
      if (trimmed === '' || trimmed.startsWith('#') || trimmed.startsWith(';')) {
        continue;
      }
      const eq = trimmed.indexOf('=');
      if (eq <= 0) {
        continue;
      }
      const key = normalise(trimmed.slice(0, eq).replace(/^-/, ''));
      const value = trimmed.slice(eq + 1).trim();
      values[key] = value;
      if (!quiet) {
        process.stdout.write(`${key} = ${value}\n`);
      }
    }
  }
  record(values);
  return 0;
}

process.exitCode = main(process.argv.slice(2));

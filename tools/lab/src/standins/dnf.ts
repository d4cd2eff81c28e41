import './stdout-pipe';
import { createInterface } from 'node:readline';
import { loadPackageFiles } from './rpm/package-files';
import { readInstalled, withTransactionLock, writeInstalled } from './rpm/rpm-database';
import { nevra, type RpmMetadata } from './rpm/rpm-package';
import { planTransaction } from './rpm/rpm-transaction';

/**
 * `dnf` (and `yum`) stand-in for an offline host: `install` of local rpm
 * files (names only match what is installed: there are no repositories),
 * `remove`, `list installed`, `--version`. Without `-y` it asks for
 * confirmation on stdin and aborts unless answered `y`, as dnf does.
 */
interface Parsed {
  readonly command: string | undefined;
  readonly args: string[];
  readonly assumeYes: boolean;
  readonly quiet: boolean;
}

function parse(argv: readonly string[]): Parsed {
  const words: string[] = [];
  let assumeYes = false;
  let quiet = false;
  for (const arg of argv) {
    if (arg === '-y' || arg === '--assumeyes') {
      assumeYes = true;
    } else if (arg === '-q' || arg === '--quiet') {
      quiet = true;
    } else if (!arg.startsWith('-')) {
      words.push(arg);
    }
  }
  const [command, ...args] = words;
  return { command, args, assumeYes, quiet };
}

function size(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} M` : `${Math.max(1, Math.round(bytes / 1024))} k`;
}

function table(title: string, packages: readonly RpmMetadata[]): string {
  const rule = '='.repeat(80);
  const rows = packages.map((pkg) =>
    ` ${pkg.name.padEnd(32)} ${pkg.arch.padEnd(8)} ${`${pkg.version}-${pkg.release}`.padEnd(24)} @commandline ${size(pkg.payloadSize).padStart(8)}`);
  return [
    rule,
    ` ${'Package'.padEnd(32)} ${'Arch'.padEnd(8)} ${'Version'.padEnd(24)} Repository       Size`,
    rule,
    `${title}:`,
    ...rows,
    '',
    'Transaction Summary',
    rule,
  ].join('\n');
}

async function confirm(): Promise<boolean> {
  process.stdout.write('Is this ok [y/N]: ');
  const rl = createInterface({ input: process.stdin });
  const answer = await new Promise<string>((resolve) => {
    rl.once('line', resolve);
    rl.once('close', () => resolve(''));
  });
  rl.close();
  return /^y(es)?$/i.test(answer.trim());
}

async function install(parsed: Parsed): Promise<number> {
  const fileArgs = parsed.args.filter((arg) => arg.endsWith('.rpm') || arg.includes('/'));
  const nameArgs = parsed.args.filter((arg) => !fileArgs.includes(arg));
  const installed = readInstalled();
  const unknown = nameArgs.filter((name) => !installed.some((pkg) => pkg.name === name));
  for (const name of nameArgs.filter((n) => !unknown.includes(n))) {
    const pkg = installed.find((p) => p.name === name);
    if (pkg !== undefined) {
      process.stdout.write(`Package ${nevra(pkg)} is already installed.\n`);
    }
  }
  if (unknown.length > 0) {
    for (const name of unknown) {
      process.stdout.write(`No match for argument: ${name}\n`);
    }
    process.stderr.write(`Error: Unable to find a match: ${unknown.join(' ')}\n`);
    return 1;
  }
  const files = loadPackageFiles(fileArgs);
  for (const file of files) {
    if (!file.ok) {
      process.stderr.write(`Can not load RPM file: ${file.path}.\nCould not open: ${file.path}\n`);
      return 1;
    }
  }
  const packages = files.flatMap((file) => (file.ok ? [file.metadata] : []));
  return withTransactionLock(async () => {
    const current = readInstalled();
    const plan = planTransaction(packages, current, { upgrade: true });
    for (const pkg of plan.alreadyInstalled) {
      process.stdout.write(`Package ${nevra(pkg)} is already installed.\n`);
    }
    if (plan.missing.length > 0) {
      process.stderr.write(
        `Error: \n Problem: conflicting requests\n${plan.missing.map((line) => `  - nothing provides ${line.replace(' is needed by ', ' needed by ')}\n`).join('')}` +
        `(try to add '--skip-broken' to skip uninstallable packages or '--nobest' to use not only best candidate packages)\n`,
      );
      return 1;
    }
    process.stdout.write('Dependencies resolved.\n');
    if (plan.install.length === 0) {
      process.stdout.write('Nothing to do.\nComplete!\n');
      return 0;
    }
    const totalBytes = plan.install.reduce((sum, pkg) => sum + pkg.payloadSize, 0);
    const upgrades = plan.install.filter((pkg) => current.some((old) => old.name === pkg.name));
    const fresh = plan.install.filter((pkg) => !upgrades.includes(pkg));
    process.stdout.write(`${table(fresh.length > 0 ? 'Installing' : 'Upgrading', plan.install)}\n`);
    process.stdout.write(`${fresh.length > 0 ? `Install  ${fresh.length} Package${fresh.length === 1 ? '' : 's'}\n` : ''}`);
    process.stdout.write(`${upgrades.length > 0 ? `Upgrade  ${upgrades.length} Package${upgrades.length === 1 ? '' : 's'}\n` : ''}`);
    process.stdout.write(`\nTotal size: ${size(totalBytes)}\nInstalled size: ${size(totalBytes)}\n`);
    if (!parsed.assumeYes && !(await confirm())) {
      process.stdout.write('Operation aborted.\n');
      return 1;
    }
    process.stdout.write('Downloading Packages:\nRunning transaction check\nTransaction check succeeded.\nRunning transaction test\nTransaction test succeeded.\nRunning transaction\n');
    const total = plan.install.length;
    plan.install.forEach((pkg, index) => {
      process.stdout.write(`  Installing       : ${nevra(pkg).padEnd(50)} ${index + 1}/${total}\n`);
    });
    const now = new Date().toISOString();
    writeInstalled([
      ...current.filter((pkg) => !plan.replace.includes(pkg)),
      ...plan.install.map(({ payloadSize, payloadSha256: _sha, ...rest }) => ({ ...rest, installTime: now, size: payloadSize })),
    ]);
    process.stdout.write(`\nInstalled:\n${plan.install.map((pkg) => `  ${nevra(pkg)}\n`).join('')}\nComplete!\n`);
    return 0;
  });
}

async function remove(parsed: Parsed): Promise<number> {
  return withTransactionLock(async () => {
    const installed = readInstalled();
    const removing = installed.filter((pkg) => parsed.args.includes(pkg.name) || parsed.args.includes(nevra(pkg)));
    const missing = parsed.args.filter((arg) => !removing.some((pkg) => pkg.name === arg || nevra(pkg) === arg));
    for (const name of missing) {
      process.stdout.write(`No match for argument: ${name}\n`);
    }
    if (removing.length === 0) {
      process.stderr.write('Error: No packages marked for removal.\n');
      return 1;
    }
    if (!parsed.assumeYes && !(await confirm())) {
      process.stdout.write('Operation aborted.\n');
      return 1;
    }
    writeInstalled(installed.filter((pkg) => !removing.includes(pkg)));
    process.stdout.write(`\nRemoved:\n${removing.map((pkg) => `  ${nevra(pkg)}\n`).join('')}\nComplete!\n`);
    return 0;
  });
}

async function main(argv: readonly string[]): Promise<number> {
  if (argv.includes('--version')) {
    process.stdout.write('4.14.0\n');
    return 0;
  }
  const parsed = parse(argv);
  switch (parsed.command) {
    case 'install':
    case 'localinstall':
    case 'upgrade':
    case 'update':
      return install(parsed);
    case 'remove':
    case 'erase':
      return remove(parsed);
    case 'list':
      process.stdout.write('Installed Packages\n');
      for (const pkg of readInstalled()) {
        process.stdout.write(`${`${pkg.name}.${pkg.arch}`.padEnd(40)} ${`${pkg.version}-${pkg.release}`.padEnd(24)} @System\n`);
      }
      return 0;
    case 'makecache':
    case 'clean':
      process.stdout.write(parsed.command === 'clean' ? '0 files removed\n' : 'Metadata cache created.\n');
      return 0;
    case undefined:
      process.stderr.write('usage: dnf [options] COMMAND\n');
      return 1;
    default:
      process.stderr.write(`No such command: ${parsed.command}. Please use /usr/bin/dnf --help\n`);
      return 1;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`Error: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);

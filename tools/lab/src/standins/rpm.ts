import './stdout-pipe';
import { loadPackageFiles } from './rpm/package-files';
import { readInstalled, withTransactionLock, writeInstalled, type InstalledPackage } from './rpm/rpm-database';
import { nevra, type RpmMetadata } from './rpm/rpm-package';
import { planTransaction, progressLine } from './rpm/rpm-transaction';

/**
 * `rpm` stand-in over the host's package database: `-qa`, `-q NAME`,
 * `-qi`, `-qp FILE`, `--qf`, `-i`/`-U`/`-F` (`-vh`, `--force`, `--nodeps`,
 * `--replacepkgs`, `--test`), `-e`, `-K`. Package files are the lab's
 * stand-in rpms; anything else fails as real rpm fails on it.
 */
interface Flags {
  mode: 'query' | 'install' | 'upgrade' | 'freshen' | 'erase' | 'checksig' | null;
  all: boolean;
  info: boolean;
  packageFile: boolean;
  list: boolean;
  verbose: boolean;
  hash: boolean;
  force: boolean;
  noDeps: boolean;
  replacePackages: boolean;
  test: boolean;
  queryFormat: string | null;
}

function parse(argv: readonly string[]): { flags: Flags; args: string[] } {
  const flags: Flags = {
    mode: null, all: false, info: false, packageFile: false, list: false, verbose: false, hash: false,
    force: false, noDeps: false, replacePackages: false, test: false, queryFormat: null,
  };
  const args: string[] = [];
  const longModes: Record<string, Flags['mode']> = {
    '--query': 'query', '--install': 'install', '--upgrade': 'upgrade', '--freshen': 'freshen',
    '--erase': 'erase', '--checksig': 'checksig',
  };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i] ?? '';
    if (arg in longModes) {
      flags.mode = longModes[arg] ?? null;
    } else if (arg === '--force') {
      flags.force = true;
      flags.replacePackages = true;
    } else if (arg === '--nodeps') {
      flags.noDeps = true;
    } else if (arg === '--replacepkgs') {
      flags.replacePackages = true;
    } else if (arg === '--test') {
      flags.test = true;
    } else if (arg === '--all') {
      flags.all = true;
    } else if (arg === '--qf' || arg === '--queryformat') {
      flags.queryFormat = argv[i + 1] ?? '';
      i += 1;
    } else if (arg.startsWith('--queryformat=') || arg.startsWith('--qf=')) {
      flags.queryFormat = arg.slice(arg.indexOf('=') + 1);
    } else if (/^-[a-zA-Z]+$/.test(arg)) {
      for (const letter of arg.slice(1)) {
        switch (letter) {
          case 'q': flags.mode = 'query'; break;
          case 'i': if (flags.mode === 'query') { flags.info = true; } else { flags.mode = 'install'; } break;
          case 'U': flags.mode = 'upgrade'; break;
          case 'F': flags.mode = 'freshen'; break;
          case 'e': flags.mode = 'erase'; break;
          case 'K': flags.mode = 'checksig'; break;
          case 'a': flags.all = true; break;
          case 'p': flags.packageFile = true; break;
          case 'l': flags.list = true; break;
          case 'v': flags.verbose = true; break;
          case 'h': flags.hash = true; break;
          default: break;
        }
      }
    } else if (!arg.startsWith('--')) {
      args.push(arg);
    }
  }
  return { flags, args };
}

function formatQuery(pkg: Omit<RpmMetadata, 'payloadSize' | 'payloadSha256'>, format: string | null): string {
  if (format === null) {
    return `${nevra(pkg)}\n`;
  }
  const values: Record<string, string> = {
    NAME: pkg.name, VERSION: pkg.version, RELEASE: pkg.release, ARCH: pkg.arch, SUMMARY: pkg.summary,
  };
  return format
    .replace(/%\{([A-Z]+)\}/g, (_m, key: string) => values[key] ?? '(none)')
    .replace(/\\n/g, '\n')
    .replace(/\\t/g, '\t');
}

function info(pkg: Omit<RpmMetadata, 'payloadSize' | 'payloadSha256'>, installTime: string | null, size: number): string {
  return [
    `Name        : ${pkg.name}`,
    `Version     : ${pkg.version}`,
    `Release     : ${pkg.release}`,
    `Architecture: ${pkg.arch}`,
    `Install Date: ${installTime === null ? '(not installed)' : new Date(installTime).toUTCString()}`,
    `Size        : ${size}`,
    `Summary     : ${pkg.summary}`,
    '',
  ].join('\n');
}

function query(flags: Flags, args: readonly string[]): number {
  if (flags.packageFile) {
    let code = 0;
    for (const file of loadPackageFiles(args, false)) {
      if (!file.ok) {
        process.stderr.write(`error: ${file.error}\n`);
        code = 1;
        continue;
      }
      process.stdout.write(flags.info ? info(file.metadata, null, file.metadata.payloadSize) : formatQuery(file.metadata, flags.queryFormat));
    }
    return code;
  }
  const installed = readInstalled();
  if (flags.all) {
    for (const pkg of installed) {
      process.stdout.write(flags.info ? info(pkg, pkg.installTime, pkg.size) : formatQuery(pkg, flags.queryFormat));
    }
    return 0;
  }
  let code = 0;
  for (const name of args) {
    const matches = installed.filter((pkg) => pkg.name === name || nevra(pkg) === name || `${pkg.name}-${pkg.version}` === name);
    if (matches.length === 0) {
      process.stdout.write(`package ${name} is not installed\n`);
      code = 1;
      continue;
    }
    for (const pkg of matches) {
      process.stdout.write(flags.info ? info(pkg, pkg.installTime, pkg.size) : formatQuery(pkg, flags.queryFormat));
    }
  }
  return code;
}

async function install(flags: Flags, args: readonly string[]): Promise<number> {
  if (args.length === 0) {
    process.stderr.write('rpm: no packages given for install\n');
    return 1;
  }
  const files = loadPackageFiles(args);
  const failed = files.filter((file) => !file.ok);
  if (failed.length > 0) {
    for (const file of failed) {
      if (!file.ok) {
        process.stderr.write(`error: ${file.error}\n`);
        if (file.kind !== 'missing' && file.kind !== 'not-rpm') {
          process.stderr.write(`error: ${file.path} cannot be installed\n`);
        }
      }
    }
    return 1;
  }
  const packages = files.flatMap((file) => (file.ok ? [file.metadata] : []));
  return withTransactionLock(() => {
    const installed = readInstalled();
    const candidates = flags.mode === 'freshen'
      ? packages.filter((pkg) => installed.some((old) => old.name === pkg.name))
      : packages;
    const plan = planTransaction(candidates, installed, {
      upgrade: flags.mode !== 'install',
      noDeps: flags.noDeps,
      replacePackages: flags.replacePackages,
    });
    if (plan.missing.length > 0) {
      process.stderr.write(`error: Failed dependencies:\n${plan.missing.map((line) => `\t${line}\n`).join('')}`);
      return 1;
    }
    if (plan.alreadyInstalled.length > 0) {
      if (flags.hash) {
        process.stdout.write(`${progressLine('Verifying...', 1, 1)}\n${progressLine('Preparing...', 1, 1)}\n`);
      }
      for (const pkg of plan.alreadyInstalled) {
        process.stderr.write(`\tpackage ${nevra(pkg)} is already installed\n`);
      }
      return 1;
    }
    if (flags.hash) {
      process.stdout.write(`${progressLine('Verifying...', 1, 1)}\n${progressLine('Preparing...', 1, 1)}\n`);
    }
    if (flags.test) {
      return 0;
    }
    const total = plan.install.length + plan.replace.length;
    if (flags.hash && plan.install.length > 0) {
      process.stdout.write('Updating / installing...\n');
    }
    const now = new Date().toISOString();
    const added: InstalledPackage[] = plan.install.map((pkg, index) => {
      if (flags.hash) {
        process.stdout.write(`${progressLine(`   ${index + 1}:${nevra(pkg).replace(/\.[^.]+$/, '')}`, index + 1, total)}\n`);
      } else if (flags.verbose) {
        process.stdout.write(`${nevra(pkg)}\n`);
      }
      const { payloadSize, payloadSha256: _sha, ...rest } = pkg;
      return { ...rest, installTime: now, size: payloadSize };
    });
    if (flags.hash && plan.replace.length > 0) {
      process.stdout.write('Cleaning up / removing...\n');
      plan.replace.forEach((pkg, index) => {
        const step = plan.install.length + index + 1;
        process.stdout.write(`${progressLine(`   ${step}:${nevra(pkg).replace(/\.[^.]+$/, '')}`, step, total)}\n`);
      });
    }
    writeInstalled([...installed.filter((pkg) => !plan.replace.includes(pkg)), ...added]);
    return 0;
  });
}

async function erase(flags: Flags, args: readonly string[]): Promise<number> {
  return withTransactionLock(() => {
    const installed = readInstalled();
    const removing = new Set<InstalledPackage>();
    let code = 0;
    for (const name of args) {
      const match = installed.find((pkg) => pkg.name === name || nevra(pkg) === name);
      if (match === undefined) {
        process.stderr.write(`error: package ${name} is not installed\n`);
        code = 1;
      } else {
        removing.add(match);
      }
    }
    if (code !== 0) {
      return code;
    }
    const remaining = installed.filter((pkg) => !removing.has(pkg));
    const names = new Set(remaining.map((pkg) => pkg.name));
    const broken = flags.noDeps
      ? []
      : remaining.flatMap((pkg) => pkg.requires.filter((req) => !names.has(req) && [...removing].some((r) => r.name === req))
        .map((req) => `${req} is needed by (installed) ${nevra(pkg)}`));
    if (broken.length > 0) {
      process.stderr.write(`error: Failed dependencies:\n${broken.map((line) => `\t${line}\n`).join('')}`);
      return 1;
    }
    writeInstalled(remaining);
    return 0;
  });
}

function checksig(args: readonly string[]): number {
  let code = 0;
  for (const file of loadPackageFiles(args)) {
    if (file.ok) {
      process.stdout.write(`${file.path}: digests OK\n`);
    } else {
      process.stdout.write(`${file.path}: DIGESTS NOT OK\n`);
      process.stderr.write(`error: ${file.error}\n`);
      code = 1;
    }
  }
  return code;
}

async function main(argv: readonly string[]): Promise<number> {
  if (argv.includes('--version')) {
    process.stdout.write('RPM version 4.16.1.3\n');
    return 0;
  }
  const { flags, args } = parse(argv);
  switch (flags.mode) {
    case 'query':
      return query(flags, args);
    case 'install':
    case 'upgrade':
    case 'freshen':
      return install(flags, args);
    case 'erase':
      return erase(flags, args);
    case 'checksig':
      return checksig(args);
    default:
      process.stderr.write('rpm: no operation specified\n');
      return 1;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);

import { readFile, readdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { writeArtifacts } from './artifacts';
import { LabPermissionError, attachLab, listLabs, requireRoot, startLab, stopLab, type Lab, type LabSummary } from './lab';
import { parseDuration } from './standins/kubelet/kubelet-options';
import { NetemUnavailableError } from './traffic-control';

/**
 * `npm run lab -- <command>`: bring test hosts up and down, write the
 * artifacts, inject faults. Labs started here, by tests and by the demo run
 * side by side. See tools/lab/README.md.
 */
const USAGE = `usage: npm run lab -- <command>

  up --hosts N [--password P] [--authorized-key FILE]... [--kubeconfig FILE]
     [--out lab.json] [--hostname-prefix h] [--csr-timeout 15m] [--name NAME]
                        bring up a lab of N hosts next to the others (first
                        removes what labs whose owner died left)
  down [LAB]            remove a lab \`up\` started (without LAB: the only one)
  prune                 remove what labs whose owner died left
  status [LAB]          list the labs on this machine, or print one's lab.json
  artifacts --out DIR   write the artifacts the installer service serves
  exec [--lab LAB] HOST -- CMD...   run a command inside a host (as root, no SSH)
  reinstall [--lab LAB] HOST   a fresh OS install of the host: a new machine-id and
                        host keys, nothing it gained since (same IP, password, keys)
  fault [--lab LAB] cut HOST | restore HOST
  fault latency HOST 200ms [--loss 5%] [--jitter 10ms]   (needs tc netem)
  fault bandwidth HOST 1mbit | fault clear HOST
  fault sshd stop|start HOST | fault rekey HOST
  fault swap on|off HOST | fault time unsync|sync HOST
  fault mcs html|ok [--status 503] | fault port close|open 6443|22623

LAB is a lab id (\`status\` lists them); without --lab, exec and fault act on
the only lab up. HOST is an id (h1), a hostname or an IP.`;

async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'up':
      return up(rest);
    case 'down':
      return down(rest);
    case 'prune': {
      requireRoot();
      const removed = await stopLab(undefined, (message) => process.stderr.write(`lab: ${message}\n`));
      process.stdout.write(removed.length === 0 ? 'lab prune: no lab had lost its owner\n' : `lab prune: removed ${removed.join(', ')}\n`);
      return 0;
    }
    case 'status':
      return status(rest);
    case 'artifacts':
      return artifacts(rest);
    case 'exec':
      return exec(rest);
    case 'reinstall':
      return reinstall(rest);
    case 'fault':
      return fault(rest);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(`${USAGE}\n`);
      return command === undefined ? 1 : 0;
    default:
      process.stderr.write(`unknown command ${command}\n${USAGE}\n`);
      return 1;
  }
}

async function up(args: readonly string[]): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      hosts: { type: 'string' },
      password: { type: 'string' },
      'authorized-key': { type: 'string', multiple: true },
      kubeconfig: { type: 'string' },
      out: { type: 'string', default: 'lab.json' },
      'hostname-prefix': { type: 'string' },
      'csr-timeout': { type: 'string' },
      name: { type: 'string' },
    },
  });
  const hosts = Number(values.hosts);
  if (!Number.isInteger(hosts) || hosts < 1) {
    process.stderr.write(`up needs --hosts N\n${USAGE}\n`);
    return 1;
  }
  const authorizedKeys = await Promise.all((values['authorized-key'] ?? []).map(async (file) =>
    (await readFile(file, 'utf8')).split('\n').filter((line) => line.trim() !== '' && !line.startsWith('#'))));
  const outFile = resolve(values.out ?? 'lab.json');
  const started = Date.now();
  const lab = await startLab({
    hosts,
    ...(values.password === undefined ? {} : { password: values.password }),
    authorizedKeys: authorizedKeys.flat(),
    ...(values.kubeconfig === undefined ? {} : { kubeconfig: await readFile(values.kubeconfig, 'utf8') }),
    ...(values['hostname-prefix'] === undefined ? {} : { hostnamePrefix: values['hostname-prefix'] }),
    ...(values['csr-timeout'] === undefined ? {} : { kubelet: { csrTimeoutSeconds: parseDuration(values['csr-timeout']) } }),
    vipServices: 'daemon',
    outFile,
    name: values.name ?? 'npm run lab',
    log: (message) => process.stderr.write(`lab: ${message}\n`),
  });
  process.stdout.write(
    `lab ${lab.id} up in ${((Date.now() - started) / 1000).toFixed(1)} s: ${lab.hosts.map((h) => `${h.hostname}=${h.ip}`).join(' ')}\n` +
    `gateway ${lab.gateway}, VIP ${lab.vip} (machine config server ${lab.machineConfigServer}${lab.apiServer ? `, API ${lab.apiServer}` : ''})\n` +
    `ssh: ssh -i ${lab.privateKeyPath} root@${lab.hosts[0]?.ip ?? ''} (password: ${lab.hosts[0]?.password ?? ''})\n` +
    `wrote ${outFile}${lab.netem ? '' : '; note: tc netem is not available here, so `fault latency` cannot work'}\n` +
    `take it down with: npm run lab -- down ${lab.id}\n`,
  );
  return 0;
}

async function down(args: readonly string[]): Promise<number> {
  requireRoot();
  const labs = await listLabs();
  const id = args[0] ?? onlyCliLab(labs);
  const removed = await stopLab(id, (message) => process.stderr.write(`lab: ${message}\n`));
  if (removed.length === 0) {
    process.stderr.write(`lab down: there is no lab ${id}\n`);
    return 1;
  }
  process.stdout.write(`lab down: lab ${id} removed, nothing of it left\n`);
  return 0;
}

/** The one lab `up` started (its owner is its daemon), for `down` without an id. */
function onlyCliLab(labs: readonly LabSummary[]): string {
  const cli = labs.filter((lab) => lab.owner.command.includes('lab-daemon.cjs'));
  if (cli.length === 1 && cli[0] !== undefined) {
    return cli[0].id;
  }
  if (cli.length === 0) {
    throw new Error(`no lab started by \`up\` is up${labs.length === 0 ? '' : ` (other labs: ${labs.map((lab) => lab.id).join(', ')}, see \`status\`)`}`);
  }
  throw new Error(`${cli.length} labs started by \`up\` are up (${cli.map((lab) => lab.id).join(', ')}): say which one, e.g. \`down ${cli[0]?.id ?? ''}\``);
}

async function status(args: readonly string[]): Promise<number> {
  const [id] = args;
  if (id !== undefined) {
    const lab = await attachLab(id);
    if (lab === null) {
      process.stdout.write(`no lab ${id} is up\n`);
      return 1;
    }
    process.stdout.write(`${JSON.stringify(lab.description, null, 2)}\n`);
    return 0;
  }
  const labs = await listLabs();
  for (const lab of labs) {
    const owner = `${lab.owner.alive ? 'pid' : 'dead pid'} ${lab.owner.pid} (${lab.owner.command.slice(0, 60)})`;
    const hosts = lab.description === null ? 'being built' : `${lab.description.hosts.length} hosts, gateway ${lab.description.gateway}, VIP ${lab.description.vip}`;
    process.stdout.write(`${lab.id}  ${lab.subnet.padEnd(16)} ${(lab.name ?? '').padEnd(16)} ${hosts}; ${owner}\n`);
  }
  if (labs.length === 0) {
    process.stdout.write('no lab is up\n');
  }
  // The earlier version kept one lab per machine under fixed names; this code leaves it alone.
  const legacy = (await readdir('/run/netns').catch(() => [] as string[])).filter((name) => name.startsWith('ccoslab-'));
  if (legacy.length > 0) {
    process.stdout.write(`(also ${legacy.length} host${legacy.length === 1 ? '' : 's'} of a lab of the earlier version: bridge ccoslab0, ${legacy.join(' ')}; not managed here)\n`);
  }
  return labs.length === 0 ? 1 : 0;
}

async function artifacts(args: readonly string[]): Promise<number> {
  const { values } = parseArgs({ args: [...args], options: { out: { type: 'string' } } });
  if (values.out === undefined) {
    process.stderr.write('artifacts needs --out DIR\n');
    return 1;
  }
  const files = await writeArtifacts(resolve(values.out));
  const total = files.reduce((sum, file) => sum + file.size, 0);
  process.stdout.write(`wrote ${files.length} artifacts (${(total / 1024 / 1024).toFixed(1)} MiB) to ${resolve(values.out)}\n`);
  return 0;
}

async function requireLab(id: string | undefined): Promise<Lab> {
  requireRoot();
  const lab = await attachLab(id);
  if (lab === null) {
    throw new Error(id === undefined ? 'no lab is up (run `npm run lab -- up --hosts N` first)' : `no lab ${id} is up (see \`npm run lab -- status\`)`);
  }
  return lab;
}

/** `--lab ID` in front of a command's arguments. */
function labOption(args: readonly string[]): { id: string | undefined; rest: readonly string[] } {
  return args[0] === '--lab' ? { id: args[1], rest: args.slice(2) } : { id: undefined, rest: args };
}

async function exec(allArgs: readonly string[]): Promise<number> {
  const { id, rest: args } = labOption(allArgs);
  const separator = args.indexOf('--');
  const host = args[0];
  const argv = separator >= 0 ? args.slice(separator + 1) : args.slice(1);
  if (host === undefined || argv.length === 0) {
    process.stderr.write('usage: exec HOST -- CMD [ARGS...]\n');
    return 1;
  }
  const lab = await requireLab(id);
  const result = await lab.exec(host, argv, { allowFailure: true });
  process.stdout.write(result.stdout);
  process.stderr.write(result.stderr);
  return result.code ?? 1;
}

async function reinstall(allArgs: readonly string[]): Promise<number> {
  const { id, rest } = labOption(allArgs);
  const [host] = rest;
  if (host === undefined) {
    process.stderr.write('usage: reinstall [--lab LAB] HOST\n');
    return 1;
  }
  const lab = await requireLab(id);
  const { machineId, fingerprints } = await lab.faults.reinstall(host);
  process.stdout.write(`${host}: reinstalled; machine-id ${machineId}\n${Object.entries(fingerprints).map(([type, fp]) => `${type} ${fp}`).join('\n')}\n`);
  return 0;
}

async function fault(args: readonly string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: { loss: { type: 'string' }, jitter: { type: 'string' }, status: { type: 'string' }, lab: { type: 'string' } },
  });
  const [kind, first, second] = positionals;
  const lab = await requireLab(values.lab);
  const { faults } = lab;
  const need = (value: string | undefined, what: string): string => {
    if (value === undefined) {
      throw new Error(`fault ${kind ?? ''} needs ${what}`);
    }
    return value;
  };
  switch (kind) {
    case 'cut':
      await faults.cutLink(need(first, 'a host'));
      break;
    case 'restore':
      await faults.restoreLink(need(first, 'a host'));
      break;
    case 'latency':
      await faults.addLatency(need(first, 'a host'), {
        delayMs: parseDuration(need(second, 'a delay such as 200ms')) * 1000,
        ...(values.jitter === undefined ? {} : { jitterMs: parseDuration(values.jitter) * 1000 }),
        ...(values.loss === undefined ? {} : { lossPercent: Number(values.loss.replace('%', '')) }),
      });
      break;
    case 'bandwidth':
      await faults.limitBandwidth(need(first, 'a host'), need(second, 'a rate such as 1mbit'));
      break;
    case 'clear':
      await faults.clearTrafficControl(need(first, 'a host'));
      break;
    case 'sshd':
      if (first === 'stop') {
        await faults.stopSshd(need(second, 'a host'));
      } else if (first === 'start') {
        await faults.startSshd(need(second, 'a host'));
      } else {
        throw new Error('fault sshd stop|start HOST');
      }
      break;
    case 'rekey': {
      const fingerprints = await faults.rekey(need(first, 'a host'));
      process.stdout.write(`${Object.entries(fingerprints).map(([type, fp]) => `${type} ${fp}`).join('\n')}\n`);
      break;
    }
    case 'swap':
      await faults.setSwap(need(second, 'a host'), need(first, 'on|off') === 'on');
      break;
    case 'time':
      await faults.setTimeSynchronised(need(second, 'a host'), need(first, 'unsync|sync') === 'sync');
      break;
    case 'mcs':
      await faults.setMachineConfigServer(need(first, 'html|ok') === 'html'
        ? { mode: 'html', ...(values.status === undefined ? {} : { status: Number(values.status) }) }
        : { mode: 'ok' });
      break;
    case 'port':
      await faults.setVipPort(Number(need(second, 'a port (6443 or 22623)')), need(first, 'close|open') === 'open');
      break;
    default:
      process.stderr.write(`unknown fault ${kind ?? ''}\n${USAGE}\n`);
      return 1;
  }
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof LabPermissionError || error instanceof NetemUnavailableError) {
      process.stderr.write(`lab: ${error.message}\n`);
      process.exitCode = error instanceof LabPermissionError ? 77 : 2;
      return;
    }
    process.stderr.write(`lab: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);

import { ApiError, isTransient, type AgentRunReply } from '@ccos/agent/data-access-api';
import { CERT_NOT_PINNED, succeeded } from '@ccos/agent/util-host';
import { bare, type CodedText, type Message, type MessageParams, isMessageCode, message } from '@ccos/shared/messages';
import { DOWNLOAD_BACKOFF, backoffDelayMs } from '@ccos/shared/util-timing';
import { HOST_PATHS } from '../host-paths';
import type { StepContext } from '../step-handler';

/** One check as reported in `detail.checks`. */
export interface CheckResult {
  readonly name: string;
  readonly passed: boolean;
  readonly observed: string;
  readonly expected: string;
  readonly hint: string;
  /** `hint` by its code in the message catalogue. */
  readonly hintCode?: string;
  readonly hintParams?: MessageParams;
}

/** A check's verdict plus the phrase the FAILED message uses for it. */
export interface CheckOutcome {
  readonly passed: boolean;
  readonly observed: string;
  readonly expected: string;
  readonly hint: CodedText;
  /** e.g. "swap is on (swapon --show lists /swapfile)"; only read when not passed. */
  readonly problem: CodedText | null;
}

/** Facts several checks share, fetched once. */
export interface PreflightFacts {
  agentRun(): Promise<AgentRunReply | { readonly error: string }>;
}

export interface PreflightCheck {
  readonly name: string;
  run(ctx: StepContext, facts: PreflightFacts): Promise<CheckOutcome>;
}

const TCP_TIMEOUT_MS = 5_000;

/** Compares dotted versions numerically: `compareVersions('5.14.0', '4.18') > 0`. */
export function compareVersions(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i += 1) {
    const diff = (a[i] ?? 0) - (b[i] ?? 0);
    if (diff !== 0) {
      return diff;
    }
  }
  return 0;
}

/** `5.14.0-362.8.1.el9_3.x86_64` → [5, 14, 0]; null when it does not start with a version. */
export function kernelVersion(release: string): number[] | null {
  const match = /^(\d+)\.(\d+)(?:\.(\d+))?/.exec(release.trim());
  return match === null ? null : [Number(match[1]), Number(match[2]), Number(match[3] ?? 0)];
}

/** Bytes of `MemTotal` in /proc/meminfo text, or null. */
export function memTotalBytes(meminfo: string): number | null {
  const match = /^MemTotal:\s+(\d+)\s*kB/m.exec(meminfo);
  return match === null ? null : Number(match[1]) * 1024;
}

export function formatBytes(bytes: number): string {
  const gib = bytes / 1024 ** 3;
  const mib = bytes / 1024 ** 2;
  return gib >= 1 ? `${gib.toFixed(1)} GiB` : mib >= 10 ? `${Math.round(mib)} MiB` : `${mib.toFixed(1)} MiB`;
}

function pass(observed: string, expected: string, hint: CodedText): CheckOutcome {
  return { passed: true, observed, expected, hint, problem: null };
}

/** The service's words for a conflict: by its code when the service sent one (servers before it send only the English text). */
function conflictText(text: string, code: string | null, params: Readonly<Record<string, unknown>> | null): string | Message {
  return isMessageCode(code) && params ? { code, params: params as MessageParams } : text;
}

function fail(problem: CodedText, observed: string, expected: string, hint: CodedText): CheckOutcome {
  return { passed: false, observed, expected, hint, problem };
}

async function tcpCheck(ctx: StepContext, port: number, role: CodedText): Promise<CheckOutcome> {
  const { vip } = ctx.config;
  const expected = `TCP connect to ${vip}:${port} (${role.message}) within ${TCP_TIMEOUT_MS / 1000} s`;
  const hint = message('agent.preflight.tcp.hint', { address: `${vip}:${port}`, vip, port: String(port) });
  let last = '';
  for (let attempt = 1; attempt <= 2; attempt += 1) {
    const probe = await ctx.net.tcpConnect(vip, port, TCP_TIMEOUT_MS);
    if (probe.ok) {
      return pass(`connected in ${probe.ms} ms`, expected, hint);
    }
    last = `${probe.code}: ${probe.message}`;
    if (attempt < 2) {
      await ctx.clock.sleep(1_000, ctx.signal);
    }
  }
  return fail(message('agent.preflight.tcpUnreachable', { address: `${vip}:${port}`, role: bare(role), error: last }), `${last} (2 attempts)`, expected, hint);
}

/**
 * The preflight checklist: the seed guide's production checks (kernel,
 * memory, `nc -zv <VIP> 6443`, `timedatectl | grep synchronized`,
 * `swapon --show`) plus what this installer needs (machine config server,
 * installer service, a unique, resolvable hostname). Order: local facts
 * first, then the network.
 */
export const PREFLIGHT_CHECKS: readonly PreflightCheck[] = [
  {
    name: 'kernel',
    async run(ctx) {
      const min = ctx.config.requirements.minKernel;
      const expected = `>= ${min}`;
      const hint = message('agent.preflight.kernel.hint', { min });
      const result = await ctx.exec.run(['uname', '-r'], { timeoutMs: 10_000 });
      const release = result.stdout.trim();
      const version = kernelVersion(release);
      if (!succeeded(result) || version === null) {
        return fail(message('agent.preflight.kernelUnknown', { output: String(release || result.error || result.exitCode) }), release || 'unknown', expected, hint);
      }
      const wanted = min.split('.').map(Number);
      return compareVersions(version, wanted) >= 0
        ? pass(release, expected, hint)
        : fail(message('agent.preflight.kernelOld', { release, min }), release, expected, hint);
    },
  },
  {
    name: 'memory',
    async run(ctx) {
      const min = ctx.config.requirements.minMemoryBytes;
      const expected = `MemTotal >= ${min} bytes (${formatBytes(min)})`;
      const hint = message('agent.preflight.memory.hint', { min: formatBytes(min) });
      const text = await ctx.fs.readFile(HOST_PATHS.meminfo).then((data) => data.toString('utf8'), () => '');
      const total = memTotalBytes(text);
      if (total === null) {
        return fail(message('agent.preflight.memoryUnknown'), 'unknown', expected, hint);
      }
      const observed = `${total} bytes (${formatBytes(total)})`;
      return total >= min ? pass(observed, expected, hint) : fail(message('agent.preflight.memoryLow', { total: formatBytes(total), min: formatBytes(min) }), observed, expected, hint);
    },
  },
  {
    name: 'cpus',
    async run(ctx) {
      const min = ctx.config.requirements.minCpus;
      const count = ctx.system.cpuCount();
      const hint = message('agent.preflight.cpus.hint', { min });
      return count >= min
        ? pass(String(count), `>= ${min}`, hint)
        : fail(message('agent.preflight.cpusLow', { count, min }), String(count), `>= ${min}`, hint);
    },
  },
  {
    name: 'swap',
    async run(ctx) {
      const expected = 'no active swap (`swapon --show` prints nothing)';
      const hint = message('agent.preflight.swap.hint');
      const result = await ctx.exec.run(['swapon', '--show', '--noheadings'], { timeoutMs: 10_000 });
      let devices: string[];
      if (succeeded(result)) {
        devices = result.stdout.split('\n').map((line) => line.trim().split(/\s+/)[0] ?? '').filter(Boolean);
      } else {
        // No swapon (minimal image): /proc/swaps lists active swap after its header line.
        const text = await ctx.fs.readFile(HOST_PATHS.swaps).then((data) => data.toString('utf8'), () => null);
        if (text === null) {
          return fail(message('agent.preflight.swapUnknown', { error: result.error ?? `exit ${result.exitCode}` }), 'unknown', expected, hint);
        }
        devices = text.split('\n').slice(1).map((line) => line.trim().split(/\s+/)[0] ?? '').filter(Boolean);
      }
      return devices.length === 0
        ? pass('swap is off', expected, hint)
        : fail(message('agent.preflight.swapOn', { devices: devices.join(', ') }), `swap is on: ${devices.join(', ')}`, expected, hint);
    },
  },
  {
    name: 'timeSynchronized',
    async run(ctx) {
      const expected = 'System clock synchronized: yes';
      const hint = message('agent.preflight.time.hint');
      const show = await ctx.exec.run(['timedatectl', 'show', '-p', 'NTPSynchronized', '--value'], { timeoutMs: 10_000 });
      let value: string | null = null;
      if (succeeded(show) && /^(yes|no)$/.test(show.stdout.trim())) {
        value = show.stdout.trim();
      } else if (show.error !== 'ENOENT') {
        // Older systemd has no `show`: read the status page, as the seed's checklist does.
        const status = await ctx.exec.run(['timedatectl'], { timeoutMs: 10_000 });
        value = /(?:System clock|NTP) synchronized:\s*(yes|no)/.exec(status.stdout)?.[1] ?? null;
      }
      if (value === null) {
        return fail(message('agent.preflight.timeUnknown', { error: show.error === 'ENOENT' ? 'ENOENT' : String(show.exitCode) }), 'unknown', expected, hint);
      }
      return value === 'yes'
        ? pass('System clock synchronized: yes', expected, hint)
        : fail(message('agent.preflight.timeNotSynced'), 'System clock synchronized: no', expected, hint);
    },
  },
  {
    name: 'clockSkew',
    async run(ctx, facts) {
      const max = ctx.config.requirements.maxClockSkewSeconds;
      const expected = `|host − service| <= ${max} s`;
      const hint = message('agent.preflight.skew.hint');
      const reply = await facts.agentRun();
      if ('error' in reply) {
        return fail(message('agent.preflight.skewUnknown', { error: reply.error }), `unknown: ${reply.error}`, expected, hint);
      }
      let server = Date.parse(reply.run.serverTime);
      let source = 'agentRun.serverTime';
      if (Number.isNaN(server) && reply.dateHeader !== null) {
        server = Date.parse(reply.dateHeader);
        source = 'Date header';
      }
      if (Number.isNaN(server)) {
        return fail(message('agent.preflight.skewNoTime'), 'unknown', expected, hint);
      }
      // The service read its clock somewhere between send and receive: compare with the midpoint.
      const local = (reply.sentAt + reply.receivedAt) / 2;
      const skew = (local - server) / 1000;
      const observed = `${skew >= 0 ? '+' : ''}${skew.toFixed(1)} s (host ${skew >= 0 ? 'ahead of' : 'behind'} the service; ${source}, round trip ${reply.receivedAt - reply.sentAt} ms)`;
      return Math.abs(skew) <= max
        ? pass(observed, expected, hint)
        : fail(message('agent.preflight.skewTooLarge', { skew: Math.abs(skew).toFixed(1), ahead: skew >= 0, max }), observed, expected, hint);
    },
  },
  { name: 'apiServerReachable', run: (ctx) => tcpCheck(ctx, 6443, message('agent.preflight.role.api')) },
  { name: 'machineConfigServerReachable', run: (ctx) => tcpCheck(ctx, 22623, message('agent.preflight.role.mcs')) },
  {
    name: 'installerServiceReachable',
    async run(ctx) {
      const url = `${ctx.config.apiUrl}/healthz`;
      const expected = `GET ${url} answers HTTP 2xx`;
      const hint = message('agent.preflight.service.hint', { url: ctx.config.apiUrl });
      let last = '';
      for (let attempt = 1; attempt <= 3; attempt += 1) {
        try {
          const reply = await ctx.api.health(ctx.signal);
          if (reply.status >= 200 && reply.status < 300) {
            return pass(`HTTP ${reply.status} in ${reply.ms} ms`, expected, hint);
          }
          last = `HTTP ${reply.status}`;
        } catch (error) {
          last = (error as Error).message;
          if (error instanceof ApiError && error.code === CERT_NOT_PINNED) {
            return fail(
              message('agent.preflight.certRefused', { error: last }),
              last,
              expected,
              message('agent.preflight.certRefused.hint', { url: ctx.config.apiUrl }),
            );
          }
        }
        if (attempt < 3) {
          await ctx.clock.sleep(attempt * 1_000, ctx.signal);
        }
      }
      return fail(message('agent.preflight.serviceUnreachable', { error: last }), last, expected, hint);
    },
  },
  {
    name: 'hostnameResolvable',
    async run(ctx) {
      const name = ctx.system.hostname();
      const expected = `getaddrinfo("${name}") returns an address`;
      const hint = message('agent.preflight.hostnameResolvable.hint', { ip: ctx.config.nodeIp, name });
      const found = await ctx.net.resolve(name);
      if (found.addresses.length === 0) {
        return fail(message('agent.preflight.hostnameUnresolved', { name, error: found.code ?? 'ENOTFOUND' }), `${found.code ?? 'no address'}`, expected, hint);
      }
      const note = found.addresses.includes(ctx.config.nodeIp) ? '' : ` (not the node IP ${ctx.config.nodeIp})`;
      return pass(`${name} → ${found.addresses.join(', ')}${note}`, expected, hint);
    },
  },
  {
    name: 'hostnameMatchesNodeName',
    async run(ctx) {
      const name = ctx.system.hostname();
      const expected = `"${ctx.config.nodeName}"`;
      const hint = message('agent.preflight.hostnameMatches.hint', { nodeName: ctx.config.nodeName });
      return name.toLowerCase() === ctx.config.nodeName
        ? pass(`"${name}"`, expected, hint)
        : fail(message('agent.preflight.hostnameMismatch', { name, nodeName: ctx.config.nodeName }), `"${name}"`, expected, hint);
    },
  },
  {
    name: 'hostnameUnique',
    async run(ctx, facts) {
      const expected = `no other Node named "${ctx.config.nodeName}"`;
      const hint = message('agent.preflight.hostnameUnique.hint');
      const reply = await facts.agentRun();
      if ('error' in reply) {
        return fail(message('agent.preflight.hostnameUniqueUnknown', { error: reply.error }), `unknown: ${reply.error}`, expected, hint);
      }
      return reply.run.hostnameConflict === null
        ? pass('unique', expected, hint)
        : fail(message('agent.preflight.hostnameTaken', { conflict: conflictText(reply.run.hostnameConflict, reply.run.hostnameConflictCode, reply.run.hostnameConflictParams) }), reply.run.hostnameConflict, expected, hint);
    },
  },
  {
    name: 'ipUnique',
    async run(ctx, facts) {
      const expected = `no other Node with address ${ctx.config.nodeIp}`;
      const hint = message('agent.preflight.ipUnique.hint');
      const reply = await facts.agentRun();
      if ('error' in reply) {
        return fail(message('agent.preflight.ipUniqueUnknown', { error: reply.error }), `unknown: ${reply.error}`, expected, hint);
      }
      return reply.run.ipConflict === null
        ? pass('unique', expected, hint)
        : fail(message('agent.preflight.ipTaken', { conflict: conflictText(reply.run.ipConflict, reply.run.ipConflictCode, reply.run.ipConflictParams) }), reply.run.ipConflict, expected, hint);
    },
  },
];

/**
 * How long the preflight keeps asking a service it cannot reach: long enough for the service to
 * restart (a rolling update, a replica killed and started again), short of the step's patience.
 */
export const AGENT_RUN_PATIENCE_MS = 60_000;

/** agentRun, asked again with backoff while the service is unreachable (up to {@link AGENT_RUN_PATIENCE_MS}); errors become a sentence. */
export function agentRunOnce(ctx: StepContext): PreflightFacts {
  let cached: Promise<AgentRunReply | { readonly error: string }> | null = null;
  return {
    agentRun() {
      cached ??= (async () => {
        const started = ctx.clock.monotonic();
        let last = '';
        for (let attempt = 0; ; attempt += 1) {
          try {
            return await ctx.api.agentRun(ctx.signal);
          } catch (error) {
            last = (error as Error).message;
            if (!isTransient(error) || ctx.signal?.aborted || ctx.clock.monotonic() - started >= AGENT_RUN_PATIENCE_MS) {
              break;
            }
            await ctx.clock.sleep(backoffDelayMs(DOWNLOAD_BACKOFF, attempt), ctx.signal);
            if (ctx.signal?.aborted) {
              break;
            }
          }
        }
        return { error: `agentRun failed: ${last}` };
      })();
      return cached;
    },
  };
}

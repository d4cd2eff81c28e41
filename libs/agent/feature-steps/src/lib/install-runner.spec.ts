import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ApiError, ArtifactClient, EventSender, Spool, type StepEvent } from '@ccos/agent/data-access-api';
import { FakeApiClient, unauthenticated, unreachable } from '@ccos/agent/data-access-api/testing';
import {
  FakeClock, FakeExecutor, FakeHttp, FakeNetwork, FakeSystemInfo, MemoryFileSystem, MemoryLogger, failed, ok,
} from '@ccos/agent/util-host/testing';
import { INSTALL_STEPS, type InstallStep } from '@ccos/shared/domain';
import { type CodedText, formatServerText, message } from '@ccos/shared/messages';
import { testConfig } from '../testing/step-harness';
import type { AgentConfig } from './agent-config';
import { InstallRunner, type RunnerDeps } from './install-runner';
import { RunControl } from './run-control';
import { failure, success, type StepContext, type StepHandler, type StepResult } from './step-handler';
import type { StepRegistry } from './step-registry';

type Behaviour = (ctx: StepContext) => Promise<StepResult>;

function stubRegistry(behaviours: Partial<Record<InstallStep, Behaviour>> = {}, problems: Partial<Record<InstallStep, CodedText[]>> = {}): { registry: StepRegistry; ran: InstallStep[] } {
  const ran: InstallStep[] = [];
  const entries = INSTALL_STEPS.map((step): [InstallStep, StepHandler] => [step, {
    step,
    validate: () => problems[step] ?? [],
    run: async (ctx) => {
      ran.push(step);
      await ctx.progress({ message: `${step} half way`, progress: 50 });
      return (behaviours[step] ?? (async () => success(`${step} done`)))(ctx);
    },
  }]);
  return { registry: Object.fromEntries(entries) as unknown as StepRegistry, ran };
}

interface World {
  readonly runner: InstallRunner;
  readonly api: FakeApiClient;
  readonly clock: FakeClock;
  readonly fs: MemoryFileSystem;
  readonly exec: FakeExecutor;
  readonly log: MemoryLogger;
  readonly control: RunControl;
  readonly sender: EventSender;
}

async function world(registry: StepRegistry, options: { config?: Partial<AgentConfig>; deps?: Partial<RunnerDeps>; fs?: MemoryFileSystem } = {}): Promise<World> {
  const config = testConfig(options.config);
  const clock = new FakeClock();
  const fs = options.fs ?? new MemoryFileSystem().seed({ [`${config.stateDir}/agent.log`]: 'agent log line\n' });
  const log = new MemoryLogger();
  const raw = new FakeApiClient(clock);
  const control = new RunControl();
  const api = control.observe(raw);
  const spool = await Spool.open(fs, `${config.stateDir}/spool.jsonl`, config.runId, log);
  const sender = new EventSender({ spool, api, clock, log, random: () => 0.5, onCancelRequested: () => control.cancelByOperator(), onUnauthenticated: () => control.tokenRefused(), onRunFinished: () => control.runEnded() });
  const http = new FakeHttp(() => ({ status: 404 }));
  const exec = new FakeExecutor().on(['journalctl'], ok('-- No entries --\n')).on(['systemctl', 'status'], ok('○ kubelet.service - Kubernetes Kubelet\n'));
  const runner = new InstallRunner({
    config, registry, exec, fs, clock, api, http, log, sender, control,
    net: new FakeNetwork(),
    system: new FakeSystemInfo(),
    artifacts: new ArtifactClient({ apiUrl: config.apiUrl, token: config.token, serviceTls: config.serviceTls, manifestSha256: config.artifactManifestSha256, http, fs, clock, log }),
    agentVersion: '0.1.0+test',
    ...options.deps,
  });
  return { runner, api: raw, clock, fs, exec, log, control, sender };
}

const summary = (events: StepEvent[]) => events.map((e) => `${e.seq} ${e.step} ${e.status}`);

describe('InstallRunner', () => {
  it('runs all six steps in order, reporting STARTED, PROGRESS and SUCCEEDED with consecutive seqs', async () => {
    const { registry, ran } = stubRegistry();
    const { runner, api } = await world(registry);
    const outcome = await runner.run(new AbortController().signal);
    expect(outcome).toEqual({ kind: 'succeeded', exitCode: 0 });
    expect(ran).toEqual([...INSTALL_STEPS]);
    const events = api.events();
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 18 }, (_, i) => i + 1));
    expect(summary(events).slice(0, 4)).toEqual(['1 PREFLIGHT STARTED', '2 PREFLIGHT PROGRESS', '3 PREFLIGHT SUCCEEDED', '4 DOWNLOAD_BINARIES STARTED']);
    expect(events[0]).toMatchObject({ runId: 'run-1', progress: 0, message: 'Preflight checks: started', detail: { agentVersion: '0.1.0+test' } });
    expect(events[2]).toMatchObject({ progress: 100, message: 'PREFLIGHT done' });
    expect(events.every((e) => !Number.isNaN(Date.parse(e.occurredAt)))).toBe(true);
  });

  it('says once, in the run\'s own events, that the service is reached over plain HTTP when it is', async () => {
    const { registry } = stubRegistry();
    const { runner, api, log } = await world(registry, { config: { apiUrl: 'http://198.18.0.1:4000', serviceTls: null, startStep: 'INSTALL_SERVICES' } });
    await runner.run(new AbortController().signal);
    const warnings = api.events().filter((event) => event.detail?.['warning'] === 'PLAIN_HTTP');
    expect(warnings).toEqual([expect.objectContaining({ seq: 2, step: 'INSTALL_SERVICES', status: 'PROGRESS', progress: 0 })]);
    expect(warnings[0]?.message).toMatch(/^warning: this run talks to the installer service over plain HTTP \(http:\/\/198\.18\.0\.1:4000\), as its operator allowed \(AGENT_PLAIN_HTTP=allow\)/);
    expect(log.text()).toContain('reached over plain HTTP');

    const pinned = await world(stubRegistry().registry);
    await pinned.runner.run(new AbortController().signal);
    expect(pinned.api.events().some((event) => event.detail?.['warning'] !== undefined)).toBe(false);
  });

  it('starts at startStep and sends nothing for the steps before it', async () => {
    const { registry, ran } = stubRegistry();
    const { runner, api } = await world(registry, { config: { startStep: 'APPLY_IGNITION' } });
    await runner.run(new AbortController().signal);
    expect(ran).toEqual(['APPLY_IGNITION', 'START_KUBELET']);
    expect(api.events()[0]).toMatchObject({ seq: 1, step: 'APPLY_IGNITION', status: 'STARTED' });
  });

  it('runs only an apply run\'s steps, and sends nothing for the others', async () => {
    const { registry, ran } = stubRegistry();
    const { runner, api } = await world(registry, { config: { purpose: 'APPLY', startStep: 'DOWNLOAD_BINARIES', steps: ['DOWNLOAD_BINARIES', 'APPLY_IGNITION', 'START_KUBELET'] } });
    expect(await runner.run(new AbortController().signal)).toMatchObject({ kind: 'succeeded' });
    expect(ran).toEqual(['DOWNLOAD_BINARIES', 'APPLY_IGNITION', 'START_KUBELET']);
    expect([...new Set(api.events().map((event) => event.step))]).toEqual(['DOWNLOAD_BINARIES', 'APPLY_IGNITION', 'START_KUBELET']);
  });

  it('reports a failed step with code, hint, command, exit code and output tail, uploads diagnostics and stops', async () => {
    const output = `${'Installing: pkg\n'.repeat(1000)}Error: nothing provides libfoo needed by bar\nscriptlet: kubeadm join --token abcdef.0123456789abcdef\n`;
    const { registry, ran } = stubRegistry({
      INSTALL_PACKAGES: async () => failure('RPM_MISSING_DEPENDENCY', 'dnf install -y (73 rpm files) failed: exit code 1', 'add the missing rpm', {
        command: { argv: ['dnf', 'install', '-y', ...Array.from({ length: 73 }, (_, i) => `/opt/r/p${i}.rpm`)], exitCode: 1, signal: null, stdout: '', stderr: output, output, durationMs: 5 },
        detail: { packages: 73 },
      }),
    });
    const { runner, api } = await world(registry);
    // The service takes a failed run's bundle only: the FAILED event must have arrived when it is uploaded.
    const deliveredAtUpload: string[] = [];
    api.failUpload = () => {
      deliveredAtUpload.push(...api.events().map((e) => `${e.step} ${e.status}`));
      return null;
    };
    const outcome = await runner.run(new AbortController().signal);
    expect(outcome).toEqual({ kind: 'failed', step: 'INSTALL_PACKAGES', code: 'RPM_MISSING_DEPENDENCY', exitCode: 1 });
    expect(deliveredAtUpload.at(-1)).toBe('INSTALL_PACKAGES FAILED');
    expect(ran).toEqual(['PREFLIGHT', 'DOWNLOAD_BINARIES', 'INSTALL_PACKAGES']);
    const failedEvent = api.events().at(-1) as StepEvent;
    expect(failedEvent).toMatchObject({ step: 'INSTALL_PACKAGES', status: 'FAILED', progress: 50, message: 'dnf install -y (73 rpm files) failed: exit code 1' });
    expect(failedEvent.detail).toMatchObject({
      code: 'RPM_MISSING_DEPENDENCY', hint: 'add the missing rpm', packages: 73, exitCode: 1,
      command: 'dnf install -y /opt/r/p0.rpm … (72 more arguments)',
    });
    const tail = String(failedEvent.detail?.['outputTail']);
    expect(Buffer.byteLength(tail)).toBeLessThanOrEqual(4096);
    expect(tail).toContain('nothing provides libfoo');
    expect(api.uploads).toHaveLength(1);
    const tar = gunzipSync(api.uploads[0] as Uint8Array).toString('latin1');
    for (const name of ['summary.json', 'agent.log', 'spool.jsonl', 'kubelet-journal.txt', 'systemctl-status-kubelet.txt', 'ignition-fetch.json', 'failed-command.txt']) {
      expect(tar).toContain(name);
    }
    expect(tar).toContain('nothing provides libfoo');
    expect(tar).toContain('"failedStep": "INSTALL_PACKAGES"');
    expect(tar).not.toContain('agt_test-token');
    // Every file of the bundle went through the scrubber.
    expect(tar).toContain('kubeadm join --token [redacted]');
    expect(tar).not.toContain('abcdef.0123456789abcdef');
  });

  it('turns an exception into a FAILED INTERNAL_ERROR event, never a crash', async () => {
    const { registry } = stubRegistry({ DOWNLOAD_BINARIES: async () => { throw new TypeError('boom'); } });
    const { runner, api } = await world(registry);
    const outcome = await runner.run(new AbortController().signal);
    expect(outcome).toMatchObject({ kind: 'failed', code: 'INTERNAL_ERROR', exitCode: 1 });
    expect(api.events().at(-1)).toMatchObject({ status: 'FAILED', message: 'Download binaries stopped on an unexpected error: boom' });
  });

  it('fails a step whose config does not validate without running it', async () => {
    const { registry, ran } = stubRegistry({}, { APPLY_IGNITION: [message('agent.ignition.refusedLabels', { labels: 'kubernetes.io/role' })] });
    const { runner, api } = await world(registry, { config: { startStep: 'APPLY_IGNITION' } });
    expect(await runner.run(new AbortController().signal)).toMatchObject({ kind: 'failed', code: 'INVALID_INPUT' });
    expect(ran).toEqual([]);
    const failed = api.events().at(-1);
    expect(failed?.message).toContain('kubelet may not set labels kubernetes.io/role on its own Node');
    // The problems are nested by code, so the service words them in Chinese too.
    expect(failed?.messageCode).toBe('agent.invalidConfig');
    expect(failed?.messageParams).toMatchObject({ problems: [{ code: 'agent.ignition.refusedLabels', params: { labels: 'kubernetes.io/role' } }] });
    expect(formatServerText('zh-CN', failed?.messageCode, failed?.messageParams, null)).toContain('kubelet 不能在自己的 Node 上设置标签 kubernetes.io/role');
  });

  it('stops with FAILED "cancelled by the operator" when the service says cancelRequested', async () => {
    let sawAbort = false;
    const { registry, ran } = stubRegistry({
      INSTALL_PACKAGES: async (ctx) => {
        while (!ctx.signal.aborted) {
          await ctx.clock.sleep(5_000, ctx.signal);
        }
        sawAbort = true;
        return success('should not be reported');
      },
    });
    const w = await world(registry);
    const run = w.runner.run(new AbortController().signal);
    await w.clock.advance(10_000);
    w.api.run = { ...w.api.run, cancelRequested: true };
    const outcome = await run;
    expect(outcome).toEqual({ kind: 'cancelled', step: 'INSTALL_PACKAGES', exitCode: 5 });
    expect(sawAbort).toBe(true);
    expect(ran).toEqual(['PREFLIGHT', 'DOWNLOAD_BINARIES', 'INSTALL_PACKAGES']);
    expect(w.api.events().at(-1)).toMatchObject({ step: 'INSTALL_PACKAGES', status: 'FAILED', message: 'cancelled by the operator', detail: { code: 'CANCELLED' } });
    expect(w.api.uploads).toHaveLength(0);
  });

  it('after a cancel, takes the service\'s refusal of its "cancelled" event (the run has ended) as final: exits 5, sends it once', async () => {
    const { registry } = stubRegistry({
      INSTALL_PACKAGES: async (ctx) => {
        while (!ctx.signal.aborted) {
          await ctx.clock.sleep(5_000, ctx.signal);
        }
        return success('should not be reported');
      },
    });
    const w = await world(registry);
    const run = w.runner.run(new AbortController().signal);
    await w.clock.advance(10_000);
    w.api.run = { ...w.api.run, cancelRequested: true };
    w.api.failReportStep = (event) => (event.status === 'FAILED' ? new ApiError('finished', 'RUN_FINISHED', 'reportStep: run has ended (CANCELLED)') : null);
    expect(await run).toEqual({ kind: 'cancelled', step: 'INSTALL_PACKAGES', exitCode: 5 });
    expect(w.api.attempts.filter((e) => e.status === 'FAILED')).toHaveLength(1);
    expect(w.api.events().some((e) => e.status === 'FAILED')).toBe(false);
  });

  it('on SIGTERM reports the current step as stopped, flushes and exits 143', async () => {
    const terminate = new AbortController();
    const { registry } = stubRegistry({
      DOWNLOAD_BINARIES: async (ctx) => {
        terminate.abort();
        await ctx.clock.sleep(60_000, ctx.signal);
        return success('x');
      },
    });
    const { runner, api } = await world(registry);
    expect(await runner.run(terminate.signal)).toEqual({ kind: 'terminated', step: 'DOWNLOAD_BINARIES', exitCode: 143 });
    expect(api.events().at(-1)).toMatchObject({ status: 'FAILED', detail: { code: 'TERMINATED' } });
  });

  it('sends a heartbeat during a long silent step', async () => {
    const { registry } = stubRegistry({
      INSTALL_PACKAGES: async (ctx) => {
        await ctx.clock.sleep(100_000);
        return success('installed');
      },
    });
    const { runner, api } = await world(registry, { config: { startStep: 'INSTALL_PACKAGES' } });
    await runner.run(new AbortController().signal);
    const step = api.events().filter((e) => e.step === 'INSTALL_PACKAGES');
    const beats = step.filter((e) => e.detail?.['heartbeat'] === true);
    expect(beats.length).toBeGreaterThanOrEqual(3);
    expect(beats[0]).toMatchObject({ status: 'PROGRESS', progress: 50, message: 'INSTALL_PACKAGES half way' });
    const times = step.map((e) => Date.parse(e.occurredAt));
    const gaps = times.slice(1).map((t, i) => t - (times[i] as number));
    expect(Math.max(...gaps)).toBeLessThanOrEqual(30_000);
  });

  it('keeps going while the service is down, then delivers everything in order', async () => {
    const { registry } = stubRegistry({ INSTALL_SERVICES: async (ctx) => { await ctx.clock.sleep(300_000); return success('ok'); } });
    const w = await world(registry);
    let down = true;
    w.api.failReportStep = () => (down ? unreachable() : null);
    const run = w.runner.run(new AbortController().signal);
    await w.clock.advance(200_000);
    expect(w.api.events()).toHaveLength(0);
    down = false;
    expect(await run).toEqual({ kind: 'succeeded', exitCode: 0 });
    const seqs = w.api.events().map((e) => e.seq);
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
    // Every request starts at the oldest event not yet delivered and holds the ones after it in order.
    const firsts = w.api.requests.map((events) => events[0].seq);
    expect(firsts).toEqual([...firsts].sort((a, b) => a - b));
    for (const events of w.api.requests) {
      expect(events.map((e) => e.seq)).toEqual(events.map((_, index) => events[0].seq + index));
    }
  });

  it('continues numbering after the events an earlier agent left in the spool, and sends those first', async () => {
    const config = testConfig();
    const fs = new MemoryFileSystem().seed({ [`${config.stateDir}/.keep`]: '' });
    const earlier = await Spool.open(fs, `${config.stateDir}/spool.jsonl`, config.runId, new MemoryLogger());
    for (const status of ['STARTED', 'PROGRESS'] as const) {
      await earlier.append({ step: 'PREFLIGHT', status, progress: 0, message: `earlier ${status}`, detail: null, occurredAt: '2026-12-01T00:00:00.000Z' });
    }
    const { registry } = stubRegistry();
    const { runner, api } = await world(registry, { fs });
    await runner.run(new AbortController().signal);
    expect(summary(api.events()).slice(0, 3)).toEqual(['1 PREFLIGHT STARTED', '2 PREFLIGHT PROGRESS', '3 PREFLIGHT STARTED']);
    expect(api.events()[0]?.message).toBe('earlier STARTED');
  });

  it('exits 4 without further events once the token is refused', async () => {
    const { registry, ran } = stubRegistry();
    const w = await world(registry);
    w.api.failReportStep = (event) => (event.seq >= 3 ? unauthenticated() : null);
    expect(await w.runner.run(new AbortController().signal)).toEqual({ kind: 'unauthenticated', exitCode: 4 });
    expect(ran.length).toBeLessThan(6);
    expect(w.api.events().map((e) => e.seq)).toEqual([1, 2]);
  });

  it('exits 7 at once, sending nothing more and retrying nothing, when the service says the run has ended', async () => {
    const { registry, ran } = stubRegistry();
    const w = await world(registry);
    const ended = new ApiError('finished', 'RUN_FINISHED', 'reportStep: run has ended (FAILED)');
    w.api.failReportStep = (event) => (event.seq >= 3 ? ended : null);
    const started = w.clock.monotonic();
    expect(await w.runner.run(new AbortController().signal)).toMatchObject({ kind: 'runFinished', exitCode: 7 });
    expect(w.clock.monotonic() - started).toBeLessThan(60_000);
    expect(ran.length).toBeLessThan(6);
    expect(w.api.events().map((e) => e.seq)).toEqual([1, 2]);
    expect(w.api.attempts.filter((e) => e.seq >= 3).map((e) => e.seq)).toEqual([3]);
  });

  it('exits 6 when the events could not be delivered within the drain limit', async () => {
    const { registry } = stubRegistry();
    const w = await world(registry, { deps: { drainLimitMs: 60_000 } });
    w.api.failReportStep = () => unreachable();
    expect(await w.runner.run(new AbortController().signal)).toEqual({ kind: 'succeeded', exitCode: 6 });
    expect(w.log.text()).toContain('stay in the spool');
  });
});

describe('InstallRunner with the real steps', () => {
  it('a failing preflight is one FAILED event listing the checks; diagnostics follow', async () => {
    const { defaultStepRegistry } = await import('./step-registry');
    const w = await world(defaultStepRegistry());
    w.exec.on(['uname', '-r'], ok('5.14.0\n')).on(['swapon'], ok('/swapfile file 2G 0B -2\n')).on(['timedatectl'], failed(1, ''));
    w.fs.seed({ '/proc/meminfo': 'MemTotal: 16000000 kB\n' });
    const outcome = await w.runner.run(new AbortController().signal);
    expect(outcome).toMatchObject({ kind: 'failed', step: 'PREFLIGHT', code: 'PREFLIGHT_FAILED' });
    const events = w.api.events();
    expect(events.filter((e) => e.status === 'PROGRESS')).toHaveLength(13);
    const last = events.at(-1) as StepEvent;
    expect(last.message).toMatch(/^preflight failed: swap is on \(swapon --show lists \/swapfile\); time synchronisation unknown/);
    expect((last.detail?.['checks'] as unknown[]).length).toBe(13);
    expect(w.api.uploads).toHaveLength(1);
  });
});

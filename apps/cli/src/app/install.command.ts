import {
  CancelInstallDocument,
  CsrsDocument,
  InstallNodeDocument,
  InstallProgressDocument,
  type InstallProgressSubscription,
  NodeDocument,
  RetryInstallDocument,
} from '@ccos/shared/api-schema';
import { type CommandContext, type CommandSpec, type NodeView, nodeArgument, printJson, printJsonLine, resolveNode, usageError } from './command';
import { EXIT, type ExitCode } from './exit-codes';
import { serverText } from './messages';
import { progressBar } from './output';

type Progress = InstallProgressSubscription['installProgress'];
type RunView = NonNullable<Progress['run']>;

const NODE_ARG = { cluster: { type: 'string' } } as const;

/** `nodes install NODE [--watch]`: starts the install; with --watch follows it to JOINED or failure. */
export const NODES_INSTALL: CommandSpec = {
  options: { ...NODE_ARG, watch: { type: 'boolean' } },
  positionals: ['NODE'],
  async run(context) {
    const node = await resolveNode(context, nodeArgument(context));
    const { installNode } = await context.api().request(InstallNodeDocument, { nodeId: node.id });
    return started(context, node, installNode, 'installStarted');
  },
};

/** `nodes retry NODE [--watch]`: resumes a failed or stalled install at its first unfinished step. */
export const NODES_RETRY: CommandSpec = {
  options: { ...NODE_ARG, watch: { type: 'boolean' } },
  positionals: ['NODE'],
  async run(context) {
    const node = await resolveNode(context, nodeArgument(context));
    const { retryInstall } = await context.api().request(RetryInstallDocument, { nodeId: node.id });
    return started(context, node, retryInstall, 'retryStarted');
  },
};

/** `nodes cancel NODE`: stops the running install. */
export const NODES_CANCEL: CommandSpec = {
  options: NODE_ARG,
  positionals: ['NODE'],
  async run(context) {
    const node = await resolveNode(context, nodeArgument(context));
    const { cancelInstall } = await context.api().request(CancelInstallDocument, { nodeId: node.id });
    if (context.output !== 'table') {
      printJson(context, cancelInstall);
    } else {
      context.io.out(context.t('installCancelled', { hostname: node.hostname, status: cancelInstall.status }));
    }
    return EXIT.ok;
  },
};

/** `nodes watch NODE`: follows the node's latest install run. */
export const NODES_WATCH: CommandSpec = {
  options: NODE_ARG,
  positionals: ['NODE'],
  async run(context) {
    const node = await resolveNode(context, nodeArgument(context));
    const { node: detail } = await context.api().request(NodeDocument, { id: node.id });
    const latest = [...(detail?.installRuns ?? [])].sort((a, b) => Date.parse(b.startedAt) - Date.parse(a.startedAt))[0];
    if (!latest) {
      throw usageError(context.t, context.t('noRun', { hostname: node.hostname }));
    }
    return follow(context, node, latest.id);
  },
};

async function started(context: CommandContext, node: NodeView, run: { readonly id: string; readonly status: string }, key: 'installStarted' | 'retryStarted'): Promise<ExitCode> {
  if (!context.flags['watch']) {
    if (context.output !== 'table') {
      printJson(context, run);
    } else {
      context.io.out(context.t(key, { hostname: node.hostname, run: run.id }));
    }
    return EXIT.ok;
  }
  if (context.output === 'table') {
    context.io.out(context.t(key, { hostname: node.hostname, run: run.id }));
  }
  return follow(context, node, run.id);
}

/**
 * Follows installProgress for one run: a line per event (table) or a JSON line per message
 * (json), until the run ends. Succeeded: the node has joined, exit 0; failed or cancelled: exit 1.
 */
async function follow(context: CommandContext, node: NodeView, runId: string): Promise<ExitCode> {
  const { t } = context;
  const api = context.api();
  let final: RunView | null = null;
  let lastCsrCheck = 0;
  let lastPending = 0;
  let drawn = 0;
  // On a terminal, one bar per step redrawn in place; otherwise a line per event.
  const draw = (run: RunView) => {
    const lines = run.steps.map((step) => progressBar(step.step, step.status, step.progress ?? null));
    context.io.out(`${drawn ? `\x1b[${drawn}F` : ''}${lines.map((line) => `\x1b[2K${line}`).join('\n')}`);
    drawn = lines.length;
  };
  const subscription = api.subscribe(InstallProgressDocument, { nodeId: node.id }, async ({ installProgress }) => {
    const run = installProgress.run;
    if (!run || run.id !== runId) {
      return false;
    }
    if (context.output !== 'table') {
      printJsonLine(context, { nodeId: node.id, hostname: node.hostname, run: { id: run.id, status: run.status, failedStep: run.failedStep, reason: run.reason }, events: installProgress.events });
    } else if (context.io.terminal) {
      draw(run);
    } else {
      for (const event of installProgress.events) {
        const progress = event.progress != null && event.status === 'PROGRESS' ? ` ${event.progress}%` : '';
        context.io.out(t('stepLine', { step: event.step, status: event.status, progress, message: serverText(context.language, event.message, event.messageCode, event.messageParams) }).trimEnd());
      }
    }
    if (run.status !== 'RUNNING') {
      final = run;
      return true;
    }
    // At START_KUBELET the node waits for its CSRs: say so when an operator must act.
    const waiting = run.steps.some((step) => step.step === 'START_KUBELET' && step.status === 'RUNNING');
    if (waiting && context.output === 'table' && Date.now() - lastCsrCheck > 5_000) {
      lastCsrCheck = Date.now();
      const { csrs } = await api.request(CsrsDocument, { clusterId: node.clusterId, pendingOnly: true }).catch(() => ({ csrs: [] }));
      const pending = csrs.filter((csr) => csr.node?.id === node.id).length;
      if (pending > 0 && pending !== lastPending) {
        context.io.out(t('waitingForCsrs', { hostname: node.hostname, count: pending }));
        drawn = 0;
      }
      lastPending = pending;
    }
    return false;
  });
  await subscription.done;
  const run = final as RunView | null;
  if (run?.status === 'SUCCEEDED') {
    const { node: after } = await api.request(NodeDocument, { id: node.id });
    if (context.output === 'table') {
      context.io.out(t('installSucceeded', { hostname: node.hostname, status: after?.status ?? '' }));
    }
    return EXIT.ok;
  }
  if (context.output === 'table') {
    context.io.err(t('installFailed', { hostname: node.hostname, status: run?.status ?? '?', step: run?.failedStep ? t('atStep', { step: run.failedStep }) : '', reason: serverText(context.language, run?.reason, run?.reasonCode, run?.reasonParams) }));
  }
  return EXIT.failed;
}

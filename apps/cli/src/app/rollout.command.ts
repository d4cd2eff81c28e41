import {
  CancelRolloutDocument,
  NodesDocument,
  PauseRolloutDocument,
  ResumeRolloutDocument,
  RolloutDocument,
  type RolloutFieldsFragment,
  RolloutPreviewDocument,
  type RolloutPreviewQuery,
  RolloutsDocument,
  StartRolloutDocument,
  type StartRolloutInput,
} from '@ccos/shared/api-schema';
import { ROLLOUT_KINDS } from '@ccos/shared/domain';
import { type CommandContext, type CommandSpec, findNode, integerFlag, printJson, resolveCluster, stringFlag, usageError } from './command';
import { CliError, EXIT } from './exit-codes';
import { serverText } from './messages';

/**
 * `rollout start --kind REBOOT|UPGRADE|REAPPLY …`: starts a rolling operation over the cluster's nodes (all of them
 * that it has work on,
 * `--nodes a,b` in that order, or those carrying `--label k=v`), at most `--max-unavailable N` (or
 * `N%`) out of service at once, new nodes only inside `--window CRON --window-minutes M
 * [--time-zone TZ]` and while none of `--pause-on-alert A,B` fires; prints it as `rollout status` does.
 * With `--dry-run` it starts nothing and prints what it would do now: each node's drain (pods
 * evicted and kept, refusals, the PodDisruptionBudgets it meets), the window and firing alerts;
 * exit 1 when a drain would be refused or blocked, or an alert fires.
 */
export const ROLLOUT_START: CommandSpec = {
  options: {
    cluster: { type: 'string' },
    kind: { type: 'string' },
    nodes: { type: 'string' },
    label: { type: 'string' },
    'max-unavailable': { type: 'string' },
    window: { type: 'string' },
    'window-minutes': { type: 'string' },
    'time-zone': { type: 'string' },
    'pause-on-alert': { type: 'string' },
    'drain-timeout': { type: 'string' },
    'ready-timeout': { type: 'string' },
    'dry-run': { type: 'boolean' },
  },
  positionals: [],
  async run(context) {
    const { t } = context;
    const given = stringFlag(context, 'kind') ?? 'REBOOT';
    const kind = ROLLOUT_KINDS.find((known) => known === given.toUpperCase());
    if (kind === undefined) {
      throw usageError(t, t('rolloutKind', { kind: given }));
    }
    const cluster = await resolveCluster(context);
    const input: StartRolloutInput = { clusterId: cluster.id, kind, ...budgetOf(context), ...(await selectionOf(context, cluster.id)) };
    const window = stringFlag(context, 'window');
    if (window !== undefined) {
      const minutes = integerFlag(context, 'window-minutes');
      if (minutes === undefined) {
        throw usageError(t, t('rolloutWindowMinutes'));
      }
      input.window = { cron: window, durationMinutes: minutes, timeZone: stringFlag(context, 'time-zone') ?? 'UTC' };
    }
    const alerts = (stringFlag(context, 'pause-on-alert') ?? '').split(',').map((name) => name.trim()).filter((name) => name !== '');
    if (alerts.length > 0) {
      input.pauseOnAlerts = alerts;
    }
    const drainTimeout = integerFlag(context, 'drain-timeout');
    const readyTimeout = integerFlag(context, 'ready-timeout');
    if (drainTimeout !== undefined) {
      input.drainTimeoutSeconds = drainTimeout;
    }
    if (readyTimeout !== undefined) {
      input.readyTimeoutSeconds = readyTimeout;
    }
    if (context.flags['dry-run'] === true) {
      const { rolloutPreview } = await context.api().request(RolloutPreviewDocument, { input });
      printPreview(context, rolloutPreview);
      return rolloutPreview.nodes.every((node) => node.drainAllowed && node.budgets.every((budget) => !budget.blocks)) && rolloutPreview.firingAlerts.length === 0 ? EXIT.ok : EXIT.failed;
    }
    const { startRollout } = await context.api().request(StartRolloutDocument, { input });
    printRollout(context, startRollout);
    return EXIT.ok;
  },
};

/** `rollout status [ROLLOUT]`: the rollout (by default the cluster's latest), its nodes' phases and what holds it. Exit 1 when it is paused or was cancelled. */
export const ROLLOUT_STATUS: CommandSpec = {
  options: { cluster: { type: 'string' } },
  positionals: ['ROLLOUT'],
  async run(context) {
    const rollout = await findRollout(context);
    printRollout(context, rollout);
    return rollout.status === 'PAUSED' || rollout.status === 'CANCELLED' ? EXIT.failed : EXIT.ok;
  },
};

export const ROLLOUT_PAUSE = rolloutAction(async (context, id) => (await context.api().request(PauseRolloutDocument, { id })).pauseRollout);
export const ROLLOUT_RESUME = rolloutAction(async (context, id) => (await context.api().request(ResumeRolloutDocument, { id })).resumeRollout);
export const ROLLOUT_CANCEL = rolloutAction(async (context, id) => (await context.api().request(CancelRolloutDocument, { id })).cancelRollout);

/** `rollout pause|resume|cancel [ROLLOUT]` (by default the cluster's latest). */
function rolloutAction(act: (context: CommandContext, id: string) => Promise<RolloutFieldsFragment>): CommandSpec {
  return {
    options: { cluster: { type: 'string' } },
    positionals: ['ROLLOUT'],
    async run(context) {
      const rollout = await findRollout(context);
      printRollout(context, await act(context, rollout.id));
      return EXIT.ok;
    },
  };
}

async function findRollout(context: CommandContext): Promise<RolloutFieldsFragment> {
  const wanted = context.positionals[0];
  if (wanted) {
    const { rollout } = await context.api().request(RolloutDocument, { id: wanted });
    if (!rollout) {
      throw new CliError(context.t('rolloutNotFound', { rollout: wanted }), EXIT.notFound);
    }
    return rollout;
  }
  const cluster = await resolveCluster(context);
  const { rollouts } = await context.api().request(RolloutsDocument, { clusterId: cluster.id });
  const latest = rollouts[0];
  if (!latest) {
    throw new CliError(context.t('noRollouts', { cluster: cluster.name }), EXIT.notFound);
  }
  return latest;
}

function budgetOf(context: CommandContext): Pick<StartRolloutInput, 'maxUnavailable' | 'maxUnavailableIsPercent'> {
  const text = stringFlag(context, 'max-unavailable');
  if (text === undefined) {
    return {};
  }
  const match = /^(\d{1,5})(%?)$/.exec(text);
  if (!match) {
    throw usageError(context.t, context.t('rolloutBudget', { value: text }));
  }
  return { maxUnavailable: Number(match[1]), maxUnavailableIsPercent: match[2] === '%' };
}

/** `--nodes` by host name or id, in the order given; `--label k=v,k2=v2`. */
async function selectionOf(context: CommandContext, clusterId: string): Promise<Pick<StartRolloutInput, 'nodeIds' | 'labels'>> {
  const labels = (stringFlag(context, 'label') ?? '').split(',').filter((pair) => pair !== '').map((pair) => {
    const at = pair.indexOf('=');
    return at < 0 ? { key: pair, value: '' } : { key: pair.slice(0, at), value: pair.slice(at + 1) };
  });
  const names = (stringFlag(context, 'nodes') ?? '').split(',').map((name) => name.trim()).filter((name) => name !== '');
  if (names.length === 0) {
    return { labels };
  }
  const { nodes } = await context.api().request(NodesDocument, { clusterId });
  const nodeIds = names.map((name) => {
    const node = findNode(nodes, name);
    if (!node) {
      throw new CliError(context.t('nodeNotFound', { node: name }), EXIT.notFound);
    }
    return node.id;
  });
  return { nodeIds, labels };
}

function printRollout(context: CommandContext, rollout: RolloutFieldsFragment): void {
  if (context.output !== 'table') {
    printJson(context, rollout);
    return;
  }
  const { t, language } = context;
  const budget = `${rollout.maxUnavailable}${rollout.maxUnavailableIsPercent ? '%' : ''}`;
  context.io.out(t('rolloutHeading', { id: rollout.id, kind: rollout.kind, status: rollout.status, budget, by: rollout.createdBy }));
  if (rollout.maintenanceWindow) {
    context.io.out(t('rolloutWindow', rollout.maintenanceWindow));
  }
  if (rollout.reason) {
    context.io.out(t('rolloutReason', { reason: serverText(language, rollout.reason, rollout.reasonCode, rollout.reasonParams) }));
  }
  if (rollout.waitingFor) {
    context.io.out(t('rolloutWaiting', { reason: serverText(language, rollout.waitingFor, rollout.waitingForCode, rollout.waitingForParams) }));
  }
  for (const node of rollout.nodes) {
    const problem = node.problem ? ` ${serverText(language, node.problem, node.problemCode, node.problemParams)}` : '';
    const run = node.applyRunId ? ` ${t('rolloutAgentRun', { run: node.applyRunId })}` : '';
    context.io.out(t('rolloutNode', { node: node.nodeName, phase: node.phase, problem: `${run}${problem}` }).trimEnd());
  }
}

function printPreview(context: CommandContext, preview: RolloutPreviewQuery['rolloutPreview']): void {
  if (context.output !== 'table') {
    printJson(context, preview);
    return;
  }
  const { t, language } = context;
  context.io.out(t('rolloutPreviewHeading', { nodes: preview.nodes.length, allowed: preview.allowed }));
  if (preview.windowOpen !== null && preview.windowChangesAt) {
    context.io.out(t(preview.windowOpen ? 'rolloutPreviewWindowOpen' : 'rolloutPreviewWindowClosed', { at: preview.windowChangesAt }));
  }
  if (preview.firingAlerts.length > 0) {
    context.io.out(t('rolloutPreviewAlerts', { alerts: preview.firingAlerts.join(', ') }));
  }
  if (preview.alertProblem) {
    context.io.out(`  ${serverText(language, preview.alertProblem, preview.alertProblemCode, preview.alertProblemParams)}`);
  }
  for (const node of preview.nodes) {
    context.io.out(t('rolloutPreviewNode', { node: node.nodeName, evict: node.counts.evict, skip: node.counts.skip }));
    for (const line of node.refusalLines) {
      context.io.out(t('rolloutPreviewRefusal', { line: serverText(language, line.message, line.messageCode, line.messageParams) }));
    }
    for (const budget of node.budgets) {
      context.io.out(t(budget.blocks ? 'rolloutPreviewBudgetBlocks' : 'rolloutPreviewBudget', { budget: `${budget.namespace}/${budget.name}`, allowed: budget.disruptionsAllowed, pods: budget.pods.join(', ') }));
    }
  }
}

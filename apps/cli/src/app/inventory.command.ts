import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import {
  ApplyInventoryDocument,
  BatchProgressDocument,
  type BatchFieldsFragment,
  ExportInventoryDocument,
  type InventoryCredentialInput,
  type InventoryPlanFieldsFragment,
  PlanInventoryDocument,
  RemovalProgressDocument,
} from '@ccos/shared/api-schema';
import { type CommandContext, type CommandSpec, confirmedByName, printJson, printJsonLine, readUserFile, resolveCluster, stringFlag, usageError } from './command';
import { CliError, EXIT } from './exit-codes';
import { serverText } from './messages';

type Change = InventoryPlanFieldsFragment['changes'][number];
type CredentialRef = NonNullable<Change['credential']>;
type Text = { readonly message: string; readonly messageCode?: string | null; readonly messageParams?: unknown };

const FILE_OPTION = { file: { type: 'string', short: 'f' } } as const;

/**
 * `plan -f FILE`: what applying the inventory file would change, changing nothing. Exit 0 when
 * nothing would change, EXIT.changes when something would (for CI), 1 when the plan cannot be
 * applied (a conflict) or the API refuses the file.
 */
export const PLAN: CommandSpec = {
  options: FILE_OPTION,
  positionals: [],
  async run(context) {
    const document = await readDocument(context);
    const { planInventory: plan } = await context.api().request(PlanInventoryDocument, { document });
    if (context.output !== 'table') {
      printJson(context, plan);
    } else {
      printPlan(context, plan);
    }
    return plan.conflicts.length > 0 ? EXIT.failed : plan.changes.length > 0 ? EXIT.changes : EXIT.ok;
  },
};

/**
 * `apply -f FILE [--yes] [--no-wait]`: shows the plan, asks for the cluster's name on a terminal
 * (or takes --yes), reads each added host's SSH secret where the file names it, applies the plan
 * as made (the API refuses if its nodes changed since), then follows the installs and removals
 * to their end. Exit 0 when every change succeeded.
 */
export const APPLY: CommandSpec = {
  options: { ...FILE_OPTION, yes: { type: 'boolean' }, 'no-wait': { type: 'boolean' } },
  positionals: [],
  async run(context) {
    const { t } = context;
    const document = await readDocument(context);
    const api = context.api();
    const { planInventory: plan } = await api.request(PlanInventoryDocument, { document });
    if (context.output !== 'table') {
      printJsonLine(context, { plan });
    } else {
      printPlan(context, plan);
    }
    if (plan.conflicts.length > 0) {
      return EXIT.failed;
    }
    if (plan.changes.length === 0) {
      return EXIT.ok;
    }
    const refused = plan.changes.find((change) => change.removal && !change.removal.allowed);
    if (refused) {
      context.io.err(t('inventoryRemovalRefused', { hostname: refused.hostname ?? '', reason: refused.removal?.refusal ? textOf(context, refused.removal.refusal) : '' }));
      return EXIT.failed;
    }
    const credentials = await readCredentials(context, plan.changes);
    if (!(await confirmedByName(context, plan.clusterName, { prompt: 'applyPrompt', needed: 'applyNeedsYes', aborted: 'applyAborted' }))) {
      return EXIT.failed;
    }
    const { applyInventory: applied } = await api.request(ApplyInventoryDocument, { document, fingerprint: plan.fingerprint, credentials });
    if (context.output !== 'table') {
      printJsonLine(context, { batchId: applied.batchId, removalRunIds: applied.removalRunIds });
    } else {
      context.io.out(t('inventoryApplied', { batch: applied.batchId ?? '-', removals: applied.removalRunIds.length }));
    }
    if (context.flags['no-wait'] === true) {
      return EXIT.ok;
    }
    const installed = applied.batchId ? await followBatch(context, applied.batchId) : true;
    let removed = true;
    for (const change of applied.plan.changes.filter((entry) => entry.kind === 'REMOVE' && entry.nodeId)) {
      removed = (await followRemoval(context, change.hostname ?? '', change.nodeId as string)) && removed;
    }
    const ok = installed && removed;
    if (context.output === 'table') {
      (ok ? context.io.out : context.io.err)(t(ok ? 'inventoryDone' : 'inventoryIncomplete'));
    }
    return ok ? EXIT.ok : EXIT.failed;
  },
};

/** `inventory export [--cluster C] [-f FILE]`: the cluster's hosts added here, as a file that plans to no change. */
export const INVENTORY_EXPORT: CommandSpec = {
  options: { cluster: { type: 'string' } },
  positionals: [],
  async run(context) {
    const cluster = await resolveCluster(context);
    const { exportInventory } = await context.api().request(ExportInventoryDocument, { clusterId: cluster.id });
    context.io.out(exportInventory.trimEnd());
    return EXIT.ok;
  },
};

async function readDocument(context: CommandContext): Promise<string> {
  const path = stringFlag(context, 'file');
  if (!path) {
    throw usageError(context.t, context.t('missingArgument', { what: '-f FILE' }));
  }
  return path === '-' ? context.readStdin() : readUserFile(context, path);
}

function textOf(context: CommandContext, text: Text): string {
  return serverText(context.language, text.message, text.messageCode, text.messageParams);
}

const marks = (labels: ReadonlyArray<{ key: string; value: string }>, taints: ReadonlyArray<{ key: string; value?: string | null; effect: string }>): string =>
  [...labels.map((label) => `${label.key}=${label.value}`), ...taints.map((taint) => `${taint.key}${taint.value ? `=${taint.value}` : ''}:${taint.effect}`)].join(',') || '-';

function printPlan(context: CommandContext, plan: InventoryPlanFieldsFragment): void {
  const { t } = context;
  const count = (kind: Change['kind']) => plan.changes.filter((change) => change.kind === kind).length;
  context.io.out(t('planSummary', { cluster: plan.clusterName, add: count('ADD'), install: count('INSTALL'), relabel: count('RELABEL'), remove: count('REMOVE'), forget: count('FORGET'), unchanged: plan.unchanged }));
  if (count('CREATE_POOL') + count('ADD_SPARE') > 0) {
    context.io.out(t('planPools', { pools: count('CREATE_POOL'), spares: count('ADD_SPARE') }));
  }
  for (const change of plan.changes) {
    const hostname = change.hostname ?? '';
    switch (change.kind) {
      case 'CREATE_POOL': {
        const pool = change.poolDefinition;
        context.io.out(t('planCreatePool', { pool: change.pool ?? '', min: pool?.minSize ?? 0, max: pool?.maxSize ?? 0, cpus: pool?.cpuCores ?? 0, memory: Number(((pool?.memoryBytes ?? 0) / 2 ** 30).toFixed(1)), marks: marks(change.labels, change.taints) }));
        break;
      }
      case 'ADD_SPARE':
        context.io.out(t('planAddSpare', { hostname, ip: change.ip ?? '', pool: change.pool ?? '' }));
        break;
      case 'ADD':
        context.io.out(t('planAdd', { hostname, ip: change.ip ?? '', marks: marks(change.labels, change.taints) }));
        break;
      case 'INSTALL':
        context.io.out(t('planInstall', { hostname }));
        break;
      case 'RELABEL':
        context.io.out(t('planRelabel', { hostname, from: marks(change.labelsBefore, change.taintsBefore), to: marks(change.labels, change.taints) }));
        break;
      case 'REMOVE':
        context.io.out(t('planRemove', { hostname, evict: change.removal?.evict ?? 0, skip: change.removal?.skip ?? 0, refuse: change.removal?.refuse ?? 0 }));
        if (change.removal?.refusal) {
          context.io.out(t('planRemoveRefused', { reason: textOf(context, change.removal.refusal) }));
        }
        break;
      case 'FORGET':
        context.io.out(t('planForget', { hostname }));
        break;
    }
  }
  for (const conflict of plan.conflicts) {
    context.io.err(t('planConflict', { reason: textOf(context, conflict) }));
  }
  for (const host of plan.attention) {
    context.io.out(t('planAttention', { hostname: host.hostname, status: host.status }));
  }
  if (plan.changes.length === 0 && plan.conflicts.length === 0) {
    context.io.out(t('planNoChanges'));
  }
}

/** Each added host's secret, read where the file names it on this machine; nothing is sent if one cannot be read. */
async function readCredentials(context: CommandContext, changes: readonly Change[]): Promise<InventoryCredentialInput[]> {
  const credentials: InventoryCredentialInput[] = [];
  for (const change of changes.filter((entry) => entry.kind === 'ADD' || entry.kind === 'ADD_SPARE')) {
    const ref = change.credential;
    const hostname = change.hostname ?? '';
    if (!ref) {
      throw new CliError(context.t('inventoryNoCredential', { hostname }), EXIT.usage);
    }
    credentials.push({
      hostname,
      password: await secretOf(context, hostname, ref.passwordFile, ref.passwordEnv, true),
      privateKey: await secretOf(context, hostname, ref.privateKeyFile, ref.privateKeyEnv, false),
      passphrase: await secretOf(context, hostname, ref.passphraseFile, ref.passphraseEnv, true),
    });
  }
  return credentials;
}

async function secretOf(context: CommandContext, hostname: string, file: CredentialRef['passwordFile'], variable: CredentialRef['passwordEnv'], oneLine: boolean): Promise<string | null> {
  if (file) {
    const path = file.startsWith('~/') ? `${homedir()}${file.slice(1)}` : file;
    try {
      const text = await readFile(path, 'utf8');
      return oneLine ? text.replace(/\r?\n$/, '') : text;
    } catch {
      throw new CliError(context.t('inventoryCredentialUnreadable', { hostname, source: file }), EXIT.usage);
    }
  }
  if (variable) {
    const value = context.env[variable];
    if (!value) {
      throw new CliError(context.t('inventoryCredentialUnreadable', { hostname, source: `$${variable}` }), EXIT.usage);
    }
    return value;
  }
  return null;
}

/** Follows the batch until no host of it is queued or installing; true when every host joined. */
async function followBatch(context: CommandContext, batchId: string): Promise<boolean> {
  const seen = new Map<string, string>();
  let last: BatchFieldsFragment | null = null;
  const subscription = context.api().subscribe(BatchProgressDocument, { batchId }, ({ batchProgress: batch }) => {
    last = batch;
    for (const host of batch.hosts) {
      const line = `${host.phase} ${host.status ?? ''} ${host.step ?? ''}`;
      if (seen.get(host.nodeId) !== line) {
        seen.set(host.nodeId, line);
        if (context.output !== 'table') {
          printJsonLine(context, { host });
        } else {
          context.io.out(context.t('applyHostLine', { hostname: host.hostname, phase: host.phase, status: host.status ?? '', step: host.step ?? '', reason: host.phase === 'FAILED' ? serverText(context.language, host.statusReason, host.statusReasonCode, host.statusReasonParams) : '' }).trimEnd());
        }
      }
    }
    const { progress } = batch;
    return progress.added + progress.queued + progress.installing === 0;
  });
  await subscription.done;
  const batch = last as BatchFieldsFragment | null;
  return batch !== null && batch.progress.joined === batch.progress.total;
}

/** Follows a removal the apply started to its end; true when it succeeded. */
async function followRemoval(context: CommandContext, hostname: string, nodeId: string): Promise<boolean> {
  let status: string | null = null;
  const subscription = context.api().subscribe(RemovalProgressDocument, { nodeId }, ({ removalProgress }) => {
    const run = removalProgress.run;
    if (!run || run.status === 'RUNNING') {
      return false;
    }
    status = run.status;
    if (context.output !== 'table') {
      printJsonLine(context, { removal: run });
    } else {
      context.io.out(context.t('applyRemovalLine', { hostname, status: run.status, reason: run.reason ? serverText(context.language, run.reason, run.reasonCode, run.reasonParams) : '' }).trimEnd());
    }
    return true;
  });
  await subscription.done;
  return (status as string | null) === 'SUCCEEDED';
}


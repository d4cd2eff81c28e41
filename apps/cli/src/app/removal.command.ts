import {
  RemovalPreviewDocument,
  type RemovalPreviewQuery,
  RemovalProgressDocument,
  type RemovalProgressSubscription,
  type RemoveNodeInput,
  RemoveNodeDocument,
} from '@ccos/shared/api-schema';
import { type CommandContext, type CommandSpec, confirmedByName, integerFlag, nodeArgument, printJsonLine, resolveNode } from './command';
import { EXIT } from './exit-codes';
import { serverText } from './messages';

type Preview = RemovalPreviewQuery['removalPreview'];
type RemovalRun = RemovalProgressSubscription['removalProgress']['run'];

/**
 * `nodes remove NODE`: shows removalPreview for the options given, asks for the host name on a
 * terminal (or takes --yes), starts removeNode and follows removalProgress to the end. With
 * --output json it prints JSON lines: `{"preview":…}`, then `{"events":…,"run":…}` per message.
 * The options default to deleting nothing irreplaceable; each drain option is a flag.
 */
export const NODES_REMOVE: CommandSpec = {
  options: {
    cluster: { type: 'string' },
    yes: { type: 'boolean' },
    force: { type: 'boolean' },
    'delete-emptydir-data': { type: 'boolean' },
    'ignore-daemonsets': { type: 'boolean' },
    'allow-last-worker': { type: 'boolean' },
    'clean-host': { type: 'boolean' },
    timeout: { type: 'string' },
    'grace-period': { type: 'string' },
  },
  positionals: ['NODE'],
  async run(context) {
    const { t } = context;
    const name = nodeArgument(context);
    const timeoutSeconds = integerFlag(context, 'timeout');
    const gracePeriodSeconds = integerFlag(context, 'grace-period');
    const node = await resolveNode(context, name);
    const options: RemoveNodeInput = {
      force: context.flags['force'] === true,
      deleteEmptyDirData: context.flags['delete-emptydir-data'] === true,
      ignoreDaemonSets: context.flags['ignore-daemonsets'] === true,
      allowLastWorker: context.flags['allow-last-worker'] === true,
      cleanHost: context.flags['clean-host'] === true,
      ...(timeoutSeconds !== undefined ? { timeoutSeconds } : {}),
      ...(gracePeriodSeconds !== undefined ? { gracePeriodSeconds } : {}),
      // The preview is of the removal as it would run once confirmed below.
      confirmHostname: node.hostname,
    };
    const api = context.api();
    const { removalPreview } = await api.request(RemovalPreviewDocument, { nodeId: node.id, options });
    showPreview(context, node.hostname, removalPreview);
    if (!removalPreview.allowed) {
      context.io.err(t('removalRefused', { reason: removalPreview.refusal ? serverText(context.language, removalPreview.refusal, removalPreview.refusalCode, removalPreview.refusalParams) : removalPreview.refusalLines.map((line) => serverText(context.language, line.message, line.messageCode, line.messageParams)).join('; ') }));
      return EXIT.failed;
    }
    if (!(await confirmedByName(context, node.hostname, { prompt: 'confirmPrompt', needed: 'confirmNeeded', aborted: 'removalAborted' }))) {
      return EXIT.failed;
    }
    const { removeNode } = await api.request(RemoveNodeDocument, { nodeId: node.id, options });
    if (context.output === 'table') {
      context.io.out(t('removalStarted', { hostname: node.hostname, run: removeNode.id }));
    }
    let final: RemovalRun = null;
    const subscription = api.subscribe(RemovalProgressDocument, { nodeId: node.id }, ({ removalProgress }) => {
      const run = removalProgress.run;
      if (!run || run.id !== removeNode.id) {
        return false;
      }
      if (context.output !== 'table') {
        printJsonLine(context, { events: removalProgress.events, run });
      } else {
        for (const event of removalProgress.events) {
          context.io.out(t('removalLine', { phase: event.phase, kind: event.kind, pod: event.pod ?? '', message: event.message ? ` ${serverText(context.language, event.message, event.messageCode, event.messageParams)}` : '' }).replace(/\s+$/, ''));
        }
      }
      if (run.status !== 'RUNNING') {
        final = run;
        return true;
      }
      return false;
    });
    await subscription.done;
    const run = final as RemovalRun;
    if (run?.status === 'SUCCEEDED') {
      if (context.output === 'table') {
        context.io.out(t('removalSucceeded', { hostname: node.hostname, status: run.nodeStatus }));
      }
      return EXIT.ok;
    }
    if (context.output === 'table') {
      context.io.err(t('removalFailed', { hostname: node.hostname, status: run?.status ?? '?', reason: serverText(context.language, run?.reason, run?.reasonCode, run?.reasonParams) }));
    }
    return EXIT.failed;
  },
};

function showPreview(context: CommandContext, hostname: string, preview: Preview): void {
  const { t } = context;
  if (context.output !== 'table') {
    printJsonLine(context, { preview });
    return;
  }
  context.io.out(t('previewHeading', { hostname }));
  context.io.out(t('previewCounts', { evict: preview.counts.evict, skip: preview.counts.skip, refuse: preview.counts.refuse }));
  if (preview.pods.length === 0) {
    context.io.out(t('previewNoPods'));
  }
  for (const pod of preview.pods) {
    context.io.out(t('previewPod', { action: pod.action, pod: pod.pod, reason: serverText(context.language, pod.reason, pod.reasonCode, pod.reasonParams) }));
  }
  for (const check of preview.safety) {
    const verdict = check.passed ? t('passed') : check.blocking ? t('blocked') : t('warns');
    context.io.out(t('previewSafety', { rule: check.rule, verdict, message: serverText(context.language, check.message, check.messageCode, check.messageParams) }).trimEnd());
  }
  for (const warning of preview.warningLines) {
    context.io.out(t('previewWarning', { message: serverText(context.language, warning.message, warning.messageCode, warning.messageParams) }));
  }
}

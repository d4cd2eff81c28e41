import { type HostManifestFieldsFragment, InspectNodeDocument } from '@ccos/shared/api-schema';
import { type CommandContext, type CommandSpec, nodeArgument, printJson, resolveNode } from './command';
import { EXIT } from './exit-codes';
import { serverText } from './messages';

/**
 * `nodes inspect NODE`: hashes every file the node's install wrote on its host now and says what
 * differs, as the console's "Inspect" does. Exit 0 when the host is as its install left it and on
 * the cluster's artifact set; 1 when files drifted, the set is outdated or the host could not be
 * inspected, so a script can act on it.
 */
export const NODES_INSPECT: CommandSpec = {
  options: { cluster: { type: 'string' } },
  positionals: ['NODE'],
  async run(context) {
    const node = await resolveNode(context, nodeArgument(context));
    const { inspectNode } = await context.api().request(InspectNodeDocument, { nodeId: node.id });
    if (context.output !== 'table') {
      printJson(context, inspectNode);
    } else {
      printInspection(context, node.hostname, inspectNode);
    }
    return inspectNode.state === 'CURRENT' && inspectNode.inspectionProblem === null ? EXIT.ok : EXIT.failed;
  },
};

function printInspection(context: CommandContext, hostname: string, manifest: HostManifestFieldsFragment): void {
  const { t } = context;
  if (manifest.inspectionProblem !== null) {
    context.io.out(t('inspectProblem', { hostname, reason: serverText(context.language, manifest.inspectionProblem, manifest.inspectionProblemCode, manifest.inspectionProblemParams) }));
  }
  context.io.out(t(`hostState.${manifest.state}`, { hostname, files: manifest.files.length, version: manifest.artifactSetVersion ?? '?' }));
  for (const file of manifest.drift) {
    context.io.out(file.found === null
      ? t('driftGone', { path: file.path, expected: file.expected.slice(0, 12) })
      : t('driftChanged', { path: file.path, expected: file.expected.slice(0, 12), found: file.found.slice(0, 12) }));
  }
  const installed = manifest.runningAtInstall;
  if (installed) {
    context.io.out(t('hostRunning', { kernel: installed.kernelRelease ?? '?', kubelet: installed.kubeletVersion ?? '?', flags: installed.kubeletFlags.length }));
  }
  const now = manifest.runningNow;
  for (const change of manifest.runningChanges) {
    context.io.out(change === 'KERNEL'
      ? t('runningKernelNow', { kernel: now?.kernelRelease ?? '?' })
      : change === 'KUBELET_VERSION' ? t('runningKubeletNow', { kubelet: now?.kubeletVersion ?? '?' }) : t('runningFlagsNow', { flags: now?.kubeletFlags.join(' ') ?? '' }));
  }
}

import { Field, GraphQLISODateTime, ID, ObjectType } from 'type-graphql';
import { HostManifestStateEnum, InstallStepEnum, MessageCodeField, MessageParamsField, RunningChangeEnum, codedFields } from '@ccos/api/util-graphql';
import type { HostManifestState, InstallStep, RunningChange } from '@ccos/shared/domain';
import type { HostManifestView } from './host-inspector';

@ObjectType('ManifestFile', { simpleResolvers: true, description: 'A file the agent wrote on the host.' })
export class ManifestFileType {
  @Field(() => String)
  path!: string;

  @Field(() => String, { description: 'Lower-case hex.' })
  sha256!: string;

  @Field(() => InstallStepEnum, { description: 'The install step that wrote it last.' })
  step!: InstallStep;
}

@ObjectType('FileDrift', { simpleResolvers: true, description: 'A recorded file that is not as the install left it.' })
export class FileDriftType {
  @Field(() => String)
  path!: string;

  @Field(() => String, { description: 'SHA-256 the install recorded.' })
  expected!: string;

  @Field(() => String, { nullable: true, description: 'SHA-256 found on the host; null when the file is gone.' })
  found!: string | null;
}

@ObjectType('RunningKubelet', { simpleResolvers: true, description: 'The kernel a host runs and the kubelet systemd started there.' })
export class RunningKubeletType {
  @Field(() => String, { nullable: true, description: '`uname -r`; null when it could not be read.' })
  kernelRelease!: string | null;

  @Field(() => String, { nullable: true, description: 'e.g. `v1.31.4`, from the running executable\'s `--version`; null when it could not be read.' })
  kubeletVersion!: string | null;

  @Field(() => [String], { description: 'The arguments systemd started kubelet with, in order; values of flags that look like secrets are replaced by `<redacted>`.' })
  kubeletFlags!: string[];
}

@ObjectType('HostManifest', { simpleResolvers: true, description: 'What a node\'s host runs by its last successful install, and what the last inspection of the host found.' })
export class HostManifestType {
  @Field(() => ID)
  nodeId!: string;

  @Field(() => ID, { description: 'The install run that wrote the files.' })
  runId!: string;

  @Field(() => GraphQLISODateTime)
  recordedAt!: Date;

  @Field(() => String, { nullable: true, description: 'The version of the artifact set the host was installed from.' })
  artifactSetVersion!: string | null;

  @Field(() => Boolean, { description: 'False when the cluster\'s installs now get another artifact set than the one this host was installed from.' })
  onClusterSet!: boolean;

  @Field(() => HostManifestStateEnum)
  state!: HostManifestState;

  @Field(() => [ManifestFileType])
  files!: ManifestFileType[];

  @Field(() => RunningKubeletType, { nullable: true, description: 'The kernel and the running kubelet once the node was Ready, as its install found them; null when the agent did not say (an older agent).' })
  runningAtInstall!: RunningKubeletType | null;

  @Field(() => RunningKubeletType, { nullable: true, description: 'The same, as the last inspection that reached the host found them; null before one.' })
  runningNow!: RunningKubeletType | null;

  @Field(() => [RunningChangeEnum], { description: 'What runs otherwise than at install: a kernel booted since, another kubelet, other kubelet arguments (compared where both sides were read).' })
  runningChanges!: RunningChange[];

  @Field(() => GraphQLISODateTime, { nullable: true, description: 'When the host was last inspected (or tried); null if never since the install.' })
  inspectedAt!: Date | null;

  @Field(() => [FileDriftType], { description: 'What the last inspection that reached the host found changed or gone.' })
  drift!: FileDriftType[];

  @Field(() => String, { nullable: true, description: 'Why the last inspection could not look at the host; the drift shown is from the one before.' })
  inspectionProblem!: string | null;

  @MessageCodeField('inspectionProblem')
  inspectionProblemCode!: string | null;

  @MessageParamsField('inspectionProblem')
  inspectionProblemParams!: Record<string, unknown> | null;
}

export function toHostManifestType(view: HostManifestView): HostManifestType {
  return {
    nodeId: view.nodeId,
    runId: view.runId,
    recordedAt: view.recordedAt,
    artifactSetVersion: view.artifactSetVersion,
    onClusterSet: view.onClusterSet,
    state: view.state,
    files: view.files.map((file) => ({ ...file })),
    runningAtInstall: view.runningAtInstall && { ...view.runningAtInstall, kubeletFlags: [...view.runningAtInstall.kubeletFlags] },
    runningNow: view.runningNow && { ...view.runningNow, kubeletFlags: [...view.runningNow.kubeletFlags] },
    runningChanges: [...view.runningChanges],
    inspectedAt: view.inspectedAt,
    drift: view.drift.map((file) => ({ ...file })),
    inspectionProblem: view.inspectionProblem?.message ?? null,
    ...codedFields('inspectionProblem', view.inspectionProblem),
  };
}

import { IsInt, IsOptional, Max, MaxLength, Min } from 'class-validator';
import { Field, InputType, Int } from 'type-graphql';
import { coded } from '@ccos/api/util-graphql';
import { DEFAULT_REMOVAL_OPTIONS, MAX_REMOVAL_TIMEOUT_SECONDS, type RemovalOptions } from '@ccos/shared/domain';

/** How to remove a node; the drain flags and their defaults are kubectl drain's. */
@InputType({ description: "Options of removeNode and removalPreview. The drain flags and defaults are kubectl drain's; the seed's command is force + deleteEmptyDirData + ignoreDaemonSets." })
export class RemoveNodeInput {
  @Field(() => Boolean, { defaultValue: false, description: 'Also evict pods without a controller, and pods of a DaemonSet that no longer exists (--force).' })
  force!: boolean;

  @Field(() => Boolean, { defaultValue: false, description: 'Also evict pods with emptyDir volumes; their data is lost (--delete-emptydir-data, the seed\'s --delete-local-data).' })
  deleteEmptyDirData!: boolean;

  @Field(() => Boolean, { defaultValue: false, description: 'Leave DaemonSet pods in place instead of refusing the drain (--ignore-daemonsets).' })
  ignoreDaemonSets!: boolean;

  @Field(() => Int, { defaultValue: -1, description: "Grace period for each evicted pod; -1 uses the pod's own (--grace-period)." })
  @IsInt(coded('validation.integer'))
  @Min(-1, coded('validation.gracePeriod'))
  gracePeriodSeconds!: number;

  @Field(() => Int, { defaultValue: DEFAULT_REMOVAL_OPTIONS.timeoutSeconds, description: 'Give up the drain after this many seconds (default an hour), leaving the node cordoned (DRAIN_FAILED); 0 waits as long as it takes (--timeout).' })
  @IsInt(coded('validation.integer'))
  @Min(0, coded('validation.drainTimeout'))
  @Max(MAX_REMOVAL_TIMEOUT_SECONDS, coded('validation.atMost', { max: MAX_REMOVAL_TIMEOUT_SECONDS }))
  timeoutSeconds!: number;

  @Field(() => Boolean, { defaultValue: false, description: 'Allow removing the last schedulable Ready worker.' })
  allowLastWorker!: boolean;

  @Field(() => Boolean, {
    defaultValue: false,
    description: 'The host is dead: delete its pods with grace period 0 instead of evicting them. Refused for a Ready node; needs confirmHostname.',
  })
  ungraceful!: boolean;

  @Field(() => String, { nullable: true, description: 'The node name typed again by the operator; required with ungraceful, checked whenever given.' })
  @IsOptional()
  @MaxLength(253, coded('validation.tooLong', { max: 253 }))
  confirmHostname?: string | null;

  @Field(() => Boolean, {
    defaultValue: false,
    description: 'Afterwards, remove what the agent installed on the host (agent folder, kubeconfig, kubelet certificates and unit) so it cannot rejoin by itself. Reported; never fails the removal.',
  })
  cleanHost!: boolean;
}

/** The options as the domain rules take them (missing input = kubectl's defaults). */
export function removalOptionsOf(input: RemoveNodeInput | null | undefined): RemovalOptions {
  if (!input) {
    return DEFAULT_REMOVAL_OPTIONS;
  }
  return {
    force: input.force ?? DEFAULT_REMOVAL_OPTIONS.force,
    deleteEmptyDirData: input.deleteEmptyDirData ?? DEFAULT_REMOVAL_OPTIONS.deleteEmptyDirData,
    ignoreDaemonSets: input.ignoreDaemonSets ?? DEFAULT_REMOVAL_OPTIONS.ignoreDaemonSets,
    gracePeriodSeconds: input.gracePeriodSeconds ?? DEFAULT_REMOVAL_OPTIONS.gracePeriodSeconds,
    timeoutSeconds: input.timeoutSeconds ?? DEFAULT_REMOVAL_OPTIONS.timeoutSeconds,
    allowLastWorker: input.allowLastWorker ?? DEFAULT_REMOVAL_OPTIONS.allowLastWorker,
    ungraceful: input.ungraceful ?? DEFAULT_REMOVAL_OPTIONS.ungraceful,
    confirmHostname: input.confirmHostname ?? null,
    cleanHost: input.cleanHost ?? DEFAULT_REMOVAL_OPTIONS.cleanHost,
  };
}

import { registerEnumType } from 'type-graphql';
import { enumOf } from '@ccos/api/util-graphql';
import { REMOVAL_EVENT_KINDS, REMOVAL_PHASES, REMOVAL_RUN_STATUSES, SAFETY_RULES } from '@ccos/shared/domain';

export const RemovalRunStatusEnum = enumOf(REMOVAL_RUN_STATUSES);
export const RemovalPhaseEnum = enumOf(REMOVAL_PHASES);
export const RemovalEventKindEnum = enumOf(REMOVAL_EVENT_KINDS);
export const RemovalSafetyRuleEnum = enumOf(SAFETY_RULES);
export const DrainPodClassEnum = enumOf(['TERMINATING', 'DAEMONSET', 'ORPHANED_DAEMONSET', 'MIRROR', 'LOCAL_STORAGE', 'UNMANAGED', 'FINISHED', 'MANAGED'] as const);
export type DrainPodClassName = keyof typeof DrainPodClassEnum;
export const DrainActionEnum = enumOf(['EVICT', 'SKIP', 'REFUSE'] as const);
export type DrainActionName = keyof typeof DrainActionEnum;
export const ForcefulDrainOptionEnum = enumOf(['FORCE', 'DELETE_EMPTY_DIR_DATA'] as const);
export type ForcefulDrainOptionName = keyof typeof ForcefulDrainOptionEnum;

registerEnumType(RemovalRunStatusEnum, { name: 'RemovalRunStatus', description: 'RUNNING, then SUCCEEDED (Node deleted), FAILED (the node stays cordoned as DRAIN_FAILED) or CANCELLED.' });
registerEnumType(RemovalPhaseEnum, {
  name: 'RemovalPhase',
  description: 'Where a run is: DRAIN (cordon + evict), STOP_KUBELET (over SSH), DELETE_NODE, DENY_CSRS, REVOKE_TOKENS, CLEAN_HOST (when asked), DONE.',
});
registerEnumType(RemovalEventKindEnum, { name: 'RemovalEventKind' });
registerEnumType(RemovalSafetyRuleEnum, {
  name: 'RemovalSafetyRule',
  description: 'CONTROL_PLANE, LAST_WORKER, UNGRACEFUL_NEEDS_DEAD_NODE, CONFIRM_HOSTNAME (blocking) and NODE_NOT_READY (a warning).',
});
registerEnumType(DrainPodClassEnum, {
  name: 'DrainPodClass',
  description: "Why kubectl drain treats a pod as it does: a controller's pod (MANAGED), emptyDir (LOCAL_STORAGE), no controller (UNMANAGED), DAEMONSET, a DaemonSet that is gone (ORPHANED_DAEMONSET), MIRROR, FINISHED, TERMINATING.",
});
registerEnumType(ForcefulDrainOptionEnum, {
  name: 'ForcefulDrainOption',
  description: 'A drain option that deletes pods the drain otherwise refuses to: FORCE (`--force`: pods without a controller, or of a DaemonSet that is gone) and DELETE_EMPTY_DIR_DATA (`--delete-emptydir-data`: pods with emptyDir volumes, whose data is lost).',
});
registerEnumType(DrainActionEnum, { name: 'DrainAction', description: 'What the drain does with a pod: EVICT, SKIP (left on the node) or REFUSE (the drain stops, nothing is evicted).' });

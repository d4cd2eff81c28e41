import { registerEnumType } from 'type-graphql';
import { HOST_MANIFEST_STATES, INSTALL_RUN_STATUSES, INSTALL_STEPS, NODE_ACTIONS, NODE_STATUSES, ROLES, RUNNING_CHANGES, STEP_EVENT_STATUSES } from '@ccos/shared/domain';
import { AUDIT_RESULTS } from './audit-middleware';

/** Turns a domain list of names into the object form type-graphql registers as an enum. */
export function enumOf<const T extends readonly string[]>(values: T): { [K in T[number]]: K } {
  return Object.fromEntries(values.map((value) => [value, value])) as { [K in T[number]]: K };
}

export const RoleEnum = enumOf(ROLES);
export const NodeStatusEnum = enumOf(NODE_STATUSES);
export const NodeActionEnum = enumOf(NODE_ACTIONS);
export const InstallStepEnum = enumOf(INSTALL_STEPS);
export const StepEventStatusEnum = enumOf(STEP_EVENT_STATUSES);
export const InstallRunStatusEnum = enumOf(INSTALL_RUN_STATUSES);
export const StepStateEnum = enumOf(['PENDING', 'RUNNING', 'SUCCEEDED', 'FAILED'] as const);
export const NodeOriginEnum = enumOf(['ADDED', 'DISCOVERED'] as const);
export const BootstrapStyleEnum = enumOf(['OPENSHIFT', 'KUBEADM'] as const);
export const AuditResultEnum = enumOf(AUDIT_RESULTS);

export const HostManifestStateEnum = enumOf(HOST_MANIFEST_STATES);
registerEnumType(HostManifestStateEnum, {
  name: 'HostManifestState',
  description: 'CURRENT: inspected, every recorded file as the install left it, on the cluster\'s artifact set. DRIFTED: the last inspection found files changed or gone. '
    + 'OUTDATED: installed from another artifact set than the cluster\'s now. UNINSPECTED: recorded, not inspected since.',
});
export const RunningChangeEnum = enumOf(RUNNING_CHANGES);
registerEnumType(RunningChangeEnum, {
  name: 'RunningChange',
  description: 'What runs on a host otherwise than at its install. KERNEL: booted another kernel since. KUBELET_VERSION: another kubelet runs. KUBELET_FLAGS: kubelet runs with other arguments.',
});
registerEnumType(RoleEnum, { name: 'Role', description: 'VIEWER reads; OPERATOR adds, installs and removes nodes and decides CSRs; ADMIN manages clusters, users and policy.' });
registerEnumType(NodeStatusEnum, { name: 'NodeStatus' });
registerEnumType(NodeActionEnum, {
  name: 'NodeAction',
  description: 'What the node\'s state allows now. ACCEPT_HOST_KEY needs ADMIN, the others OPERATOR; CANCEL_REMOVAL only while the removal drains.',
});
registerEnumType(InstallStepEnum, { name: 'InstallStep' });
registerEnumType(StepEventStatusEnum, { name: 'StepEventStatus' });
registerEnumType(InstallRunStatusEnum, { name: 'InstallRunStatus' });
registerEnumType(StepStateEnum, { name: 'StepState' });
registerEnumType(NodeOriginEnum, { name: 'NodeOrigin', description: 'ADDED through this service, or DISCOVERED in the cluster.' });
registerEnumType(BootstrapStyleEnum, {
  name: 'BootstrapStyle',
  description: 'Who requests kubelet client certificates: OPENSHIFT (node-bootstrapper service account) or KUBEADM (bootstrap tokens).',
});
registerEnumType(AuditResultEnum, {
  name: 'AuditResult',
  description: 'SUCCESS; FAILURE (the action was tried and failed); DENIED (the caller was not allowed); PENDING (the action started and its end was not recorded).',
});

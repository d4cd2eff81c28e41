import type { NodeEntity } from '@ccos/api/data-access-db';
import { type NodeType, codedFields, toNodeHealthType, toNodeRemediationType, toHostVerdictType } from '@ccos/api/util-graphql';
import { NEXT_STEP_TEXT, nextStepOf, nodeActions } from '@ccos/shared/domain';
import { message } from '@ccos/shared/messages';

/** Copies only public fields: sealed credentials never reach a response, even by accident. */
export function toNodeType(node: NodeEntity): NodeType {
  const step = nextStepOf(node);
  const nextStep = step ? NEXT_STEP_TEXT[step] : null;
  return {
    id: node.id,
    clusterId: node.clusterId,
    hostname: node.hostname,
    ip: node.ip,
    sshPort: node.sshPort,
    sshUser: node.sshUser,
    sshAuthMethod: node.sshAuthMethod,
    hostKeyFingerprint: node.hostKeyFingerprint,
    offeredHostKeyFingerprint: node.offeredHostKeyFingerprint,
    labels: node.labels.map(({ key, value }) => ({ key, value })),
    taints: node.taints.map(({ key, value, effect }) => ({ key, value: value ?? null, effect })),
    status: node.status,
    statusReason: node.statusReason,
    statusReasonCode: node.statusReasonCoded?.code ?? null,
    statusReasonParams: node.statusReasonCoded?.params ?? null,
    nextStep: nextStep?.message ?? null,
    nextStepCode: nextStep?.code ?? null,
    nextStepParams: nextStep?.params ?? null,
    origin: node.origin,
    everJoined: node.everJoined,
    availableActions: nodeActions(node),
    role: node.role,
    ready: node.ready,
    unschedulable: node.unschedulable,
    health: toNodeHealthType(node),
    remediation: toNodeRemediationType(node.remediation),
    reinstallRequired: node.reinstallRequired ? message(node.reinstallRequired.code, node.reinstallRequired.params).message : null,
    ...codedFields('reinstallRequired', node.reinstallRequired),
    facts: {
      arch: node.facts.arch ?? null,
      osRelease: node.facts.osRelease ?? null,
      kernel: node.facts.kernel ?? null,
      freeDiskBytes: node.facts.freeDiskBytes ?? null,
    },
    agentSha256: node.agentSha256,
    batchId: node.batchId,
    batchPhase: node.batchPhase,
    hostVerdict: toHostVerdictType(node),
    createdAt: node.createdAt,
    updatedAt: node.updatedAt,
  };
}

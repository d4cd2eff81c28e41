import type { ClusterEntity, MemberReason, NodeGroupMemberState, NodeGroupProfile } from '@ccos/api/data-access-db';
import type { Label, Taint } from '@ccos/shared/domain';
import { bare, type CodedText, type Message, message } from '@ccos/shared/messages';

/** The actor of decisions cluster-autoscaler asked for (over gRPC, authenticated by its client certificate). */
export const AUTOSCALER_ACTOR = 'cluster-autoscaler';
/** The actor of what the service's own checks decided (a spare ready, a host back in the pool or out). */
export const SERVICE_ACTOR = 'ccos-scaler';

/** Node statuses in which addNode's checks ended without a usable host. */
export const CHECK_FAILED = new Set(['AUTH_FAILED', 'UNREACHABLE', 'HOST_KEY_CHANGED', 'PRECHECK_FAILED']);
/** `uname -m` by `kubernetes.io/arch`. */
export const UNAME_ARCH: Record<string, string> = { amd64: 'x86_64', arm64: 'aarch64' };

/** Member states that count toward a group's current size (installed or on the way). */
export const IN_GROUP: readonly NodeGroupMemberState[] = ['RESERVED', 'RUNNING', 'DELETING'];

export interface NodeGroupDefinition {
  readonly clusterId: string;
  readonly name: string;
  readonly minSize: number;
  readonly maxSize: number;
  readonly labels: readonly Label[];
  readonly taints: readonly Taint[];
  readonly profile: NodeGroupProfile;
  /** Why the group's hosts take a restricted node role (see roleLabelRefusal). */
  readonly roleLabelReason?: string | null;
}

/** An instance as cluster-autoscaler sees it (NodeGroupNodes). */
export interface GroupInstance {
  /** The providerID (`ccos://<cluster>/<node id>`), or a placeholder's for a reservation no spare could fill. */
  readonly id: string;
  readonly state: 'CREATING' | 'RUNNING' | 'DELETING';
  readonly error: { readonly code: string; readonly message: string; readonly errorClass: 'OUT_OF_RESOURCES' | 'OTHER' } | null;
  readonly nodeId: string | null;
  readonly hostname: string | null;
}

/** A refusal cluster-autoscaler gets as a gRPC status; its English text is the status's details, its code and parameters ride beside it. */
export class AutoscalingRefusal extends Error {
  override readonly name = 'AutoscalingRefusal';
  constructor(
    readonly code: 'NOT_FOUND' | 'INVALID_ARGUMENT' | 'FAILED_PRECONDITION',
    readonly text: CodedText,
  ) {
    super(text.message);
  }
}

/** A member's standing from its coded text: the English text the store compares, and the code clients word it from. */
export function standing(text: CodedText): MemberReason {
  return { reason: text.message, reasonCoded: bare(text) };
}

/** The instance id a reservation no spare could fill carries. */
export function placeholderId(cluster: string, group: string, index: number): string {
  return `ccos://${cluster}/unfulfilled.${group}.${index}`;
}

/** `ccos://<cluster>/<node id>`; the cluster's name when it is safe in a kubelet flag, else its id. */
export function providerIdOf(cluster: Pick<ClusterEntity, 'id' | 'name'>, nodeId: string): string {
  return `ccos://${/^[A-Za-z0-9._-]{1,253}$/.test(cluster.name) ? cluster.name : cluster.id}/${nodeId}`;
}

/** The first leftovers by name (data) and how many more; null when there are none. */
export function leftoversOf(leftovers: ReadonlyArray<{ kind: string; item: string }>): Message | null {
  if (leftovers.length === 0) {
    return null;
  }
  const shown = leftovers.slice(0, 5).map((leftover) => leftover.item);
  return bare(message('autoscaling.member.leftovers', { items: shown.join(', '), more: Math.max(leftovers.length - 5, 0) }));
}

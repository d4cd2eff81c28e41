import { Field, GraphQLISODateTime, ObjectType } from 'type-graphql';
import type { HostVerdict, HostVerdictKind, LeftoverKind } from '@ccos/shared/domain';
import { MessageCodeField, MessageParamsField } from './message-code-fields';

@ObjectType('LeftoverItem', { simpleResolvers: true })
export class LeftoverItemType {
  @Field(() => String, { description: 'KUBELET_CERTIFICATES, KUBECONFIG, KUBERNETES_FILES, KUBELET_SERVICE, CLUSTER_NODE, CLUSTER_CSRS or REMOVED_MACHINE' })
  kind!: LeftoverKind;

  @Field(() => String)
  item!: string;

  @Field(() => String, { nullable: true, description: "The object's name in the cluster, for CLUSTER_NODE and CLUSTER_CSRS (what cleanup deletes or denies)" })
  name?: string;
}

@ObjectType('HostVerdict', { simpleResolvers: true, description: 'What the add-time checks found of an earlier membership of the host.' })
export class HostVerdictType {
  @Field(() => String, { description: 'CLEAN, CLEANABLE (leftovers lists what cleanup removes) or REINSTALL_REQUIRED' })
  verdict!: HostVerdictKind;

  @Field(() => [LeftoverItemType])
  leftovers!: LeftoverItemType[];

  @Field(() => String)
  reason!: string;

  @MessageCodeField('reason')
  reasonCode!: string | null;

  @MessageParamsField('reason')
  reasonParams!: Record<string, unknown> | null;

  @Field(() => GraphQLISODateTime)
  checkedAt!: Date;

  @Field(() => GraphQLISODateTime, { nullable: true })
  cleanedAt!: Date | null;
}

/** The stored verdict as the API shows it. */
export function toHostVerdictType(node: { readonly hostVerdict: HostVerdict | null }): HostVerdictType | null {
  const verdict = node.hostVerdict;
  if (!verdict) {
    return null;
  }
  return {
    verdict: verdict.verdict,
    leftovers: verdict.leftovers.map(({ kind, item, name }) => ({ kind, item, name })),
    reason: verdict.reason,
    reasonCode: verdict.reasonCoded?.code ?? null,
    reasonParams: verdict.reasonCoded?.params ?? null,
    checkedAt: new Date(verdict.checkedAt),
    cleanedAt: verdict.cleanedAt ? new Date(verdict.cleanedAt) : null,
  };
}

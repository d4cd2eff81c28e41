import { Field, GraphQLISODateTime, ObjectType } from 'type-graphql';
import type { HostVerdictKind, LeftoverKind } from '@ccos/shared/domain';

@ObjectType('LeftoverItem', { simpleResolvers: true })
export class LeftoverItemType {
  @Field(() => String, { description: 'KUBELET_CERTIFICATES, KUBECONFIG, KUBERNETES_FILES, KUBELET_SERVICE, CLUSTER_NODE, CLUSTER_CSRS or REMOVED_MACHINE' })
  kind!: LeftoverKind;

  @Field(() => String)
  item!: string;
}

@ObjectType('HostVerdict', { simpleResolvers: true, description: 'What the add-time checks found of an earlier membership of the host.' })
export class HostVerdictType {
  @Field(() => String, { description: 'CLEAN, CLEANABLE (leftovers lists what cleanup removes) or REINSTALL_REQUIRED' })
  verdict!: HostVerdictKind;

  @Field(() => [LeftoverItemType])
  leftovers!: LeftoverItemType[];

  @Field(() => String)
  reason!: string;

  @Field(() => GraphQLISODateTime)
  checkedAt!: Date;

  @Field(() => GraphQLISODateTime, { nullable: true })
  cleanedAt!: Date | null;
}

import { Field, GraphQLISODateTime, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { enumOf } from '@ccos/api/util-graphql';
import type { KubeletCsrKind } from '@ccos/shared/domain';
import { KubeletCsrKindEnum } from './csr.enums';

export const NodeCertificateSourceEnum = enumOf(['ISSUED_CSR'] as const);
registerEnumType(NodeCertificateSourceEnum, { name: 'NodeCertificateSource', description: 'Where a certificate\'s validity was read: ISSUED_CSR (the certificate the signer issued for the node\'s newest CSR of that kind).' });

@ObjectType('NodeCertificate', { description: 'A certificate a node\'s kubelet holds now (the newest the cluster issued for it of its kind), and when it expires.' })
export class NodeCertificateType {
  @Field(() => String, { description: 'The node name (from CN=system:node:<name>).' })
  node!: string;

  @Field(() => ID, { nullable: true, description: 'The inventory node, when the node is in the inventory.' })
  nodeId!: string | null;

  @Field(() => KubeletCsrKindEnum)
  kind!: KubeletCsrKind;

  @Field(() => NodeCertificateSourceEnum)
  source!: 'ISSUED_CSR';

  @Field(() => String, { description: 'The CSR whose issued certificate this is.' })
  csrName!: string;

  @Field(() => GraphQLISODateTime)
  notBefore!: Date;

  @Field(() => GraphQLISODateTime)
  notAfter!: Date;

  @Field(() => Int, { description: 'Seconds until notAfter (negative once expired).' })
  expiresInSeconds!: number;

  @Field(() => Boolean, { description: 'Fewer than 30 days left (or expired).' })
  expiringSoon!: boolean;
}

@ObjectType('PendingRenewal', { description: 'The oldest serving-certificate renewal of a node waiting for a decision.' })
export class PendingRenewalType {
  @Field(() => String)
  node!: string;

  @Field(() => ID, { nullable: true })
  nodeId!: string | null;

  @Field(() => String)
  csrName!: string;

  @Field(() => GraphQLISODateTime)
  createdAt!: Date;

  @Field(() => String, { description: 'Why it is pending: the first failed check, or that renewal auto-approve is off.' })
  reason!: string;
}

@ObjectType('ClusterCertificates', { description: 'The certificates of a cluster\'s nodes and the renewals waiting.' })
export class ClusterCertificatesType {
  @Field(() => ID)
  clusterId!: string;

  @Field(() => [NodeCertificateType])
  certificates!: NodeCertificateType[];

  @Field(() => [PendingRenewalType])
  pendingRenewals!: PendingRenewalType[];
}

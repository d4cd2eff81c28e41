import { Field, GraphQLISODateTime, ID, Int, ObjectType } from 'type-graphql';
import { MessageCodeField, MessageParamsField } from '@ccos/api/util-graphql';
import type { CsrState } from '@ccos/shared/domain';
import { CsrDecisionType } from './csr-decision.type';
import { CsrVerdictType } from './csr-verdict.type';
import { CsrChangeKindEnum, CsrStatusEnum } from './csr.enums';

@ObjectType('CsrRequester', { description: 'Who created the CSR, as the API server authenticated them (never taken from the request).' })
export class CsrRequesterType {
  @Field(() => String)
  username!: string;

  @Field(() => [String])
  groups!: string[];
}

@ObjectType('CsrSubject', { description: 'The subject the PKCS#10 request asks for.' })
export class CsrSubjectType {
  @Field(() => String, { description: 'e.g. CN=system:node:worker-1, O=system:nodes' })
  text!: string;

  @Field(() => [String])
  commonNames!: string[];

  @Field(() => [String])
  organizations!: string[];
}

@ObjectType('CsrSans', { description: 'Subject alternative names the request asks for.' })
export class CsrSansType {
  @Field(() => [String])
  dnsNames!: string[];

  @Field(() => [String])
  ipAddresses!: string[];

  @Field(() => [String])
  emailAddresses!: string[];

  @Field(() => [String])
  uris!: string[];

  @Field(() => [String], { description: 'Names of other kinds (directory names, registered IDs, ...).' })
  otherNames!: string[];
}

@ObjectType('CsrKey', { description: 'The public key of the request.' })
export class CsrKeyType {
  @Field(() => String, { description: 'RSA, EC, Ed25519, ...' })
  algorithm!: string;

  @Field(() => Int, { nullable: true })
  bits!: number | null;

  @Field(() => String, { nullable: true })
  curve!: string | null;

  @Field(() => String, { description: 'How the request is signed, e.g. ECDSA with SHA-256.' })
  signatureAlgorithm!: string;

  @Field(() => Boolean, { description: 'The request is signed by its own key (proof of possession).' })
  signatureValid!: boolean;
}

@ObjectType('CsrCertificate', { description: 'The certificate the signer issued for a CSR.' })
export class CsrCertificateType {
  @Field(() => String)
  serialNumber!: string;

  @Field(() => [String])
  dnsNames!: string[];

  @Field(() => [String])
  ipAddresses!: string[];

  @Field(() => GraphQLISODateTime)
  notBefore!: Date;

  @Field(() => GraphQLISODateTime)
  notAfter!: Date;
}

@ObjectType('CsrNode', { description: 'The node of the inventory a CSR is for.' })
export class CsrNodeType {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  hostname!: string;
}

@ObjectType('Csr', { description: 'A CertificateSigningRequest of a cluster, what it claims, how it was decided, and what the policy says.' })
export class CsrType {
  @Field(() => ID, { description: 'The cluster the CSR belongs to.' })
  clusterId!: string;

  @Field(() => String)
  name!: string;

  @Field(() => String)
  signerName!: string;

  @Field(() => CsrRequesterType)
  requester!: CsrRequesterType;

  @Field(() => [String])
  usages!: string[];

  @Field(() => CsrSubjectType, { nullable: true, description: 'Null when the request could not be parsed.' })
  subject!: CsrSubjectType | null;

  @Field(() => CsrSansType, { nullable: true })
  sans!: CsrSansType | null;

  @Field(() => CsrKeyType, { nullable: true })
  key!: CsrKeyType | null;

  @Field(() => String, { nullable: true, description: 'Why the request could not be parsed.' })
  parseError!: string | null;

  @Field(() => GraphQLISODateTime, { nullable: true })
  createdAt!: Date | null;

  @Field(() => Int, { nullable: true, description: 'Seconds since creation.' })
  ageSeconds!: number | null;

  @Field(() => CsrStatusEnum)
  status!: CsrState;

  @Field(() => Boolean, { description: 'The signer has issued the certificate.' })
  issued!: boolean;

  @Field(() => CsrCertificateType, { nullable: true, description: 'The issued certificate\'s names and validity; null before it is issued.' })
  certificate!: CsrCertificateType | null;

  @Field(() => String, { nullable: true, description: 'Who approved or denied it: a user, auto-approver, or the condition reason when decided outside this service (e.g. KubectlApprove).' })
  decidedBy!: string | null;

  @Field(() => String, { nullable: true, description: 'Why it was approved, denied or failed.' })
  statusReason!: string | null;

  @MessageCodeField('statusReason', '; null for a reason decided outside this service, an operator\'s own words, or from before codes')
  statusReasonCode!: string | null;

  @MessageParamsField('statusReason')
  statusReasonParams!: Record<string, unknown> | null;

  @Field(() => [CsrDecisionType], { description: 'Decisions recorded by this service, oldest first.' })
  decisions!: CsrDecisionType[];

  @Field(() => CsrNodeType, { nullable: true, description: 'The inventory node the CSR is for, if any.' })
  node!: CsrNodeType | null;

  @Field(() => Boolean, { description: 'A client CSR for a node this service installs, filed by someone other than its install run\'s bootstrap identity or the node itself: never approved, denied by the auto-approver.' })
  impostor!: boolean;

  @Field(() => CsrVerdictType, { description: 'What the auto-approve policy says about it now.' })
  verdict!: CsrVerdictType;
}

@ObjectType('CsrChange', { description: 'A CSR of the cluster was added, changed or deleted.' })
export class CsrChangeType {
  @Field(() => ID)
  clusterId!: string;

  @Field(() => String)
  name!: string;

  @Field(() => CsrChangeKindEnum)
  kind!: 'ADDED' | 'MODIFIED' | 'DELETED';

  @Field(() => CsrType, { nullable: true, description: 'The CSR as it is now; null once deleted.' })
  csr!: CsrType | null;
}

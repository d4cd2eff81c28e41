import { Arg, Args, Authorized, Ctx, ID, Mutation, Query, Resolver, Root, Subscription } from 'type-graphql';
import { MultiLine, type RequestContext, TOPICS, actorOf } from '@ccos/api/util-graphql';
import { CSR_CHECK_OVERRIDES, type CsrCheckName, type CsrCheckOverride, SERVING_IDENTITY_CHECKS } from '@ccos/shared/domain';
import { type CsrChangedMessage, uniqueCsrChanges } from './csr-changes';
import { CsrVerdictType } from './csr-verdict.type';
import type { CsrService } from './csr.service';
import { CsrChangeType, CsrType } from './csr.type';
import { CsrsArgs } from './csrs.args';
import { ClusterCertificatesType } from './node-certificate.type';
import type { NodeCertificatesService } from './node-certificates.service';

/** What force relaxes, from the policy's own table, so the API never says more or less than the policy does. */
const FORCE_DESCRIPTION =
  `Approve although the policy would not. Relaxes only the inventory and time-window checks (${checksOverriddenBy('FORCE').join(', ')}) and, ` +
  `for a host this service did not install with a run identity of its own, ${checksOverriddenBy('FORCE_UNLESS_INSTALLED_HERE').join(' and ')} ` +
  '(for one it did, only its run\'s identity files its client CSR and only the certificate issued to that identity its serving CSRs). Never the certificate\'s own form ' +
  '(signer, usages, subject, key, signature, SAN form), and never, on any path (join, renewal, auto-approved or not), ' +
  `the rules of every serving certificate (${SERVING_IDENTITY_CHECKS.join(', ')}): requested by the node it names, no DNS name but that node's, ` +
  'no address or name of the cluster (VIP, API server host, the kubernetes Service\'s ClusterIP, kubernetes[.default[.svc[.<cluster domain>]]], ' +
  'api. and api-int.<base domain>).';

@Resolver(() => CsrType)
export class CsrResolver {
  constructor(
    private readonly csrService: CsrService,
    private readonly certificateService: NodeCertificatesService,
  ) {}

  @Authorized('VIEWER')
  @Query(() => ClusterCertificatesType, {
    description: 'The client and serving certificates each node of the cluster holds now, with their expiry (from the certificates the kubelet signers issued), and the oldest renewal of each node waiting for a decision.',
  })
  async nodeCertificates(
    @Arg('clusterId', () => ID) clusterId: string,
    @Arg('node', () => String, { nullable: true, description: 'Only this node (its name).' }) node: string | null | undefined,
  ): Promise<ClusterCertificatesType> {
    const { certificates, pendingRenewals } = await this.certificateService.of(clusterId, node);
    return { clusterId, certificates, pendingRenewals };
  }

  @Authorized('VIEWER')
  @Query(() => [CsrType], { description: 'The cluster\'s CertificateSigningRequests, newest first, with the auto-approve policy\'s verdict on each.' })
  async csrs(@Args(() => CsrsArgs) args: CsrsArgs): Promise<CsrType[]> {
    return this.csrService.list(args.clusterId, args.pendingOnly);
  }

  @Authorized('VIEWER')
  @Query(() => [CsrVerdictType], { description: 'Dry run: what the auto-approve policy would do with each CSR pending now (oldest first). Changes nothing.' })
  async csrPolicyPreview(@Arg('clusterId', () => ID) clusterId: string): Promise<CsrVerdictType[]> {
    return this.csrService.preview(clusterId);
  }

  @Authorized('OPERATOR')
  @Mutation(() => CsrType, {
    description:
      'Approves a pending CSR. One the policy would not approve needs force: true, the ADMIN role and a reason, and is recorded as forced. See force for what it relaxes.',
  })
  async approveCsr(
    @Arg('clusterId', () => ID) clusterId: string,
    @Arg('name', () => String) name: string,
    @Arg('force', () => Boolean, {
      defaultValue: false,
      description: FORCE_DESCRIPTION,
    })
    force: boolean,
    @Arg('reason', () => String, { nullable: true, description: 'Why the policy is overridden (with force: true; at most 500 characters). Stored in the decision and the audit log.' })
    @MultiLine()
    reason: string | null | undefined,
    @Ctx() context: RequestContext,
  ): Promise<CsrType> {
    return this.csrService.approve(clusterId, name, { username: actorOf(context), role: context.user?.role ?? 'VIEWER' }, { force, reason: reason ?? null });
  }

  @Authorized('OPERATOR')
  @Mutation(() => CsrType, { description: 'Denies a pending CSR; the reason goes into the Denied condition and csr_decisions.' })
  async denyCsr(
    @Arg('clusterId', () => ID) clusterId: string,
    @Arg('name', () => String) name: string,
    @Arg('reason', () => String) @MultiLine() reason: string,
    @Ctx() context: RequestContext,
  ): Promise<CsrType> {
    return this.csrService.deny(clusterId, name, actorOf(context), reason);
  }

  @Authorized('VIEWER')
  @Subscription(() => CsrChangeType, {
    description: 'One message per change of a CSR of the cluster (created, approved, denied, issued, deleted, or a decision recorded).',
    subscribe: ({ args, context }) =>
      uniqueCsrChanges((context as RequestContext).events.subscribe(TOPICS.CSR_CHANGED, String(args['clusterId'])) as AsyncIterable<CsrChangedMessage>),
  })
  async csrChanged(@Root() message: CsrChangedMessage, @Arg('clusterId', () => ID) _clusterId: string): Promise<CsrChangeType> {
    const csr = message.kind === 'DELETED' ? null : await this.csrService.get(message.clusterId, message.name);
    return { clusterId: message.clusterId, name: message.name, kind: message.kind, csr };
  }
}

/** The checks a rule of CSR_CHECK_OVERRIDES applies to, in the table's order. */
function checksOverriddenBy(rule: CsrCheckOverride): CsrCheckName[] {
  return (Object.entries(CSR_CHECK_OVERRIDES) as Array<[CsrCheckName, CsrCheckOverride]>).filter(([, given]) => given === rule).map(([name]) => name);
}

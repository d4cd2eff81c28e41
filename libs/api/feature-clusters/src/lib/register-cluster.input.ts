import { IsOptional, MaxLength } from 'class-validator';
import { Field, InputType } from 'type-graphql';
import type { BootstrapStyle } from '@ccos/api/data-access-db';
import { BootstrapStyleEnum, MultiLine, Satisfies, Secret, coded } from '@ccos/api/util-graphql';
import { checkApiServerUrl, checkClusterName, checkIp } from '@ccos/shared/domain';

@InputType({ description: 'A cluster to manage: give either `kubeconfig`, or `token` (with `caCert` unless the API server certificate is publicly trusted).' })
export class RegisterClusterInput {
  @Field(() => String, { description: 'Short name, a DNS label (e.g. prod-east).' })
  @Satisfies(checkClusterName)
  name!: string;

  @Field(() => String, { description: 'e.g. https://api.prod.example.com:6443' })
  @Satisfies(checkApiServerUrl)
  apiServerUrl!: string;

  @Field(() => String, { description: 'The master VIP: where hosts reach the API (6443) and the machine config server (22623).' })
  @Satisfies(checkIp)
  vip!: string;

  @Field(() => String, { nullable: true, description: 'Write-only.' })
  @Secret()
  @MultiLine()
  @IsOptional()
  @MaxLength(256 * 1024, coded('validation.tooLarge', { kib: 256 }))
  kubeconfig?: string | null;

  @Field(() => String, { nullable: true, description: 'Service-account bearer token. Write-only.' })
  @Secret()
  @IsOptional()
  @MaxLength(16 * 1024, coded('validation.tooLarge', { kib: 16 }))
  token?: string | null;

  @Field(() => String, { nullable: true, description: 'PEM CA bundle for the API server, with `token`.' })
  @MultiLine()
  @IsOptional()
  @MaxLength(64 * 1024, coded('validation.tooLarge', { kib: 64 }))
  caCert?: string | null;

  @Field(() => Boolean, { defaultValue: false })
  csrAutoApprove!: boolean;

  @Field(() => Boolean, { defaultValue: true, description: 'Auto-approve serving-certificate renewals of nodes joined here (see Cluster.autoApproveRenewals).' })
  autoApproveRenewals?: boolean;

  @Field(() => Boolean, {
    defaultValue: false,
    description:
      'Accept an http:// API server URL or a kubeconfig with insecure-skip-tls-verify. Without it both are refused: the credentials would travel in clear or to whoever poses as the API server. Shown on the cluster.',
  })
  allowInsecureTransport!: boolean;

  @Field(() => BootstrapStyleEnum, { defaultValue: 'OPENSHIFT' })
  bootstrapStyle!: BootstrapStyle;

  @Field(() => String, { nullable: true, description: 'PEM CA of the machine config server (22623), if not the cluster CA.' })
  @MultiLine()
  @IsOptional()
  @MaxLength(64 * 1024, coded('validation.tooLarge', { kib: 64 }))
  machineConfigCaCert?: string | null;
}

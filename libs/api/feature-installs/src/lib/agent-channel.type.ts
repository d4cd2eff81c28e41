import { Field, ObjectType, registerEnumType } from 'type-graphql';

/** Where the service's HTTPS certificate comes from. */
export type CertificateSource = 'GENERATED' | 'FILES';

export const CertificateSourceEnum = { GENERATED: 'GENERATED', FILES: 'FILES' } as const satisfies Record<CertificateSource, CertificateSource>;
registerEnumType(CertificateSourceEnum, {
  name: 'CertificateSource',
  valuesConfig: {
    GENERATED: { description: 'Issued by the service\'s own CA (kept sealed in the database, shared by every replica); agents pin that CA.' },
    FILES: { description: 'TLS_CERT_FILE and TLS_KEY_FILE, reloaded when they change.' },
  },
});

/** What the service's agent channel settings are, from the configuration. */
export interface AgentChannelSettings {
  readonly plainHttpAllowed: boolean;
  readonly certificateSource: CertificateSource;
  /** PEM of the CA a client may trust (generated CA or TLS_CA_FILE), or null. */
  caCertificates(): string | null;
}

@ObjectType('AgentChannelSettings', { description: 'How install agents reach the service, as configured.' })
export class AgentChannelSettingsType {
  @Field(() => Boolean, { description: 'AGENT_PLAIN_HTTP=allow: agents may use plain HTTP, with their token and the service\'s answers unprotected on the network. A warning.' })
  plainHttpAllowed!: boolean;

  @Field(() => CertificateSourceEnum)
  certificateSource!: CertificateSource;

  @Field(() => String, { nullable: true, description: 'PEM of the CA that issued the service\'s certificate (for browsers and tools to trust); public information.' })
  caCertificate!: string | null;
}

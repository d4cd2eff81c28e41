import { Authorized, Query, Resolver } from 'type-graphql';
import { type AgentChannelSettings, AgentChannelSettingsType } from './agent-channel.type';

@Resolver()
export class AgentChannelResolver {
  constructor(private readonly settings: AgentChannelSettings) {}

  @Authorized('VIEWER')
  @Query(() => AgentChannelSettingsType, { description: 'How install agents reach the service; the console warns when plain HTTP is allowed.' })
  agentChannel(): AgentChannelSettingsType {
    return { plainHttpAllowed: this.settings.plainHttpAllowed, certificateSource: this.settings.certificateSource, caCertificate: this.settings.caCertificates() };
  }
}

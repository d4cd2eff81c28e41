export { createInstallFeature, type InstallFeature, type InstallFeatureOptions } from './lib/install-feature';
export { InstallResolver } from './lib/install.resolver';
export { InstallRunResolver } from './lib/install-run.resolver';
export { AgentResolver } from './lib/agent.resolver';
export { AgentChannelResolver } from './lib/agent-channel.resolver';
export type { AgentChannelSettings, CertificateSource } from './lib/agent-channel.type';
export type { AgentLaunchSettings, AgentServiceTls } from './lib/ssh-agent-control';
export type { InstallGauges, InstallObserver } from './lib/install-metrics';
export type { InstallReadiness } from './lib/install.service';

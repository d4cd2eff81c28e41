export { createNodeFeature, type NodeFeature, type NodeFeatureOptions } from './lib/node-feature';
export { NodeResolver } from './lib/node.resolver';
export type { HostStatesOf, NodeViews } from './lib/node.mapper';
export { NodeBatchResolver } from './lib/node-batch.resolver';
export { HostCleanupResolver } from './lib/host-cleanup.resolver';
export type { NodeMarks, NodeObjectMarks, NodeService } from './lib/node.service';
export type { NodeBatchService } from './lib/node-batch.service';
export type { ClusterLeftoverCleaner, HostCleanupService } from './lib/host-cleanup.service';
export type { BatchInstalls, InstallReadiness } from './lib/install-ports';

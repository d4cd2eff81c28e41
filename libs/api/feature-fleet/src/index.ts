export { createFleetFeature, type FleetFeature, type FleetFeatureOptions } from './lib/fleet-feature';
export { HostManifestResolver } from './lib/host-manifest.resolver';
export { type HostInspectorOptions, type HostManifestView, HostInspector, INSPECT_TASK } from './lib/host-inspector';
export { type ApplyRuns, CONDUCT_TASK, ROLLOUT_ACTOR, ROLLOUT_NODE_TASK, RolloutConductor, type RolloutObserver, type StartRollout } from './lib/rollouts/rollout-conductor';
export { RolloutResolver } from './lib/rollouts/rollout.resolver';

export { createFleetFeature, type FleetFeature } from './lib/fleet-feature';
export { HostManifestResolver } from './lib/host-manifest.resolver';
export { type HostInspectorOptions, type HostManifestView, HostInspector, INSPECT_TASK } from './lib/host-inspector';

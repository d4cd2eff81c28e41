import { type HostInspectorOptions, HostInspector } from './host-inspector';
import { HostManifestResolver } from './host-manifest.resolver';

/** Keeping the fleet current: what each host runs, and drift. */
export interface FleetFeature {
  readonly inspector: HostInspector;
  readonly resolver: HostManifestResolver;
  start(): void;
  stop(): void;
}

export function createFleetFeature(options: HostInspectorOptions): FleetFeature {
  const inspector = new HostInspector(options);
  return {
    inspector,
    resolver: new HostManifestResolver(inspector),
    start: () => inspector.start(),
    stop: () => inspector.stop(),
  };
}

export { createArtifactsFeature, type ArtifactsFeature, type ArtifactsFeatureOptions } from './lib/artifacts-feature';
export { ArtifactSetResolver, type ArtifactVersionOverrides } from './lib/artifact-set.resolver';
export type { ClusterArtifacts } from './lib/cluster-artifacts';
// The artifacts CLI (apps/api/src/artifacts-cli.ts) imports sets without a running service.
export { ArtifactImportError, ArtifactSetStore } from './lib/artifact-set-store';

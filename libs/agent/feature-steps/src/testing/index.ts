export { FakeArtifactServer, artifactBytes, sha256 } from './artifact-server';
export { API_URL, TOKEN, stepHarness, testConfig, type Route, type StepHarness } from './step-harness';

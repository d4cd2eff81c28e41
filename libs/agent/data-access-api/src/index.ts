export { ApiError, isRunFinished, isTransient, isUnauthenticated, type ApiFailureKind } from './lib/api-errors';
export { GraphqlApiClient, type AgentRunReply, type ApiClient, type GraphqlApiClientOptions, type HealthReply } from './lib/api-client';
export { ARTIFACT_KINDS, parseManifest, type Artifact, type ArtifactKind, type ArtifactManifest } from '@ccos/shared/domain';
export {
  ArtifactClient, DownloadError, MANIFEST_MISMATCH,
  type ArtifactClientOptions, type DownloadOptions, type DownloadProgress, type DownloadResult,
} from './lib/artifact-client';
export { MAX_DIAGNOSTICS_BYTES, uploadDiagnostics, type UploadOutcome } from './lib/diagnostics-upload';
export { EventSender, type DrainOutcome, type EventSenderOptions } from './lib/event-sender';
export { AGENT_RUN, REPORT_STEP, type AgentRun, type ReportStepResult, type StepEvent, type StepEventInput } from './lib/operations';
export { Spool } from './lib/spool';

export { parseAgentConfig, type AgentConfig, type ConfigParse, type Requirements } from './lib/agent-config';
export { collectDiagnostics, type DiagnosticsInput } from './lib/diagnostics-bundle';
export { FAILURE_CODES, diagnose, type Diagnosis, type FailureCode } from './lib/failure-codes';
export { HOST_PATHS, statePaths } from './lib/host-paths';
export { EXIT_CODES, InstallRunner, shortCommand, type RunOutcome, type RunnerDeps } from './lib/install-runner';
export { RunControl } from './lib/run-control';
export {
  failure, success,
  type ProgressUpdate, type StepContext, type StepFailure, type StepHandler, type StepResult, type StepSuccess,
} from './lib/step-handler';
export { defaultStepRegistry, type StepRegistry } from './lib/step-registry';

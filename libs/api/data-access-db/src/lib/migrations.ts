import { InitialSchema1764460800000 } from './migrations/1764460800000-initial-schema';
import { InstallRunsAndDiagnostics1764547200000 } from './migrations/1764547200000-install-runs-and-diagnostics';
import { CsrDecisionsForced1764633600000 } from './migrations/1764633600000-csr-decisions-forced';
import { RemovalRuns1764720000000 } from './migrations/1764720000000-removal-runs';
import { UserSessionGeneration1764806400000 } from './migrations/1764806400000-user-session-generation';
import { AgentChannel1765000000000 } from './migrations/1765000000000-agent-channel';
import { UserSessionsAndLoginLimits1765100000000 } from './migrations/1765100000000-user-sessions-and-login-limits';
import { RunBoundBootstrapIdentities1765200000000 } from './migrations/1765200000000-run-bound-bootstrap-identities';
import { ClusterInsecureTransport1765300000000 } from './migrations/1765300000000-cluster-insecure-transport';
import { ClusterAutoApproveRenewals1766100000000 } from './migrations/1766100000000-cluster-auto-approve-renewals';
import { NodeBatches1766200000000 } from './migrations/1766200000000-node-batches';
import { AgentLaunchClaims1766500000000 } from './migrations/1766500000000-agent-launch-claims';
import { Autoscaling1767000000000 } from './migrations/1767000000000-autoscaling';
import { CodedMessages1767100000000 } from './migrations/1767100000000-coded-messages';
import { ClusterArtifactVersion1767200000000 } from './migrations/1767200000000-cluster-artifact-version';
import { AutoscalingActivityCoded1767350000000 } from './migrations/1767350000000-autoscaling-activity-coded';
import { NodeGroupMemberCoded1767450000000 } from './migrations/1767450000000-node-group-member-coded';
import { CsrDecisionCoded1767460000000 } from './migrations/1767460000000-csr-decision-coded';
import { InstallRunEventCaps1767471250000 } from './migrations/1767471250000-install-run-event-caps';
import { RemovalEventPhase1767480000000 } from './migrations/1767480000000-removal-event-phase';
import { ClusterReadiness1767490000000 } from './migrations/1767490000000-cluster-readiness';
import { JobWorkerHeartbeats1767500000000 } from './migrations/1767500000000-job-worker-heartbeats';
import { NodeHealth1767510000000 } from './migrations/1767510000000-node-health';
import { Remediation1767520000000 } from './migrations/1767520000000-remediation';
import { RemovalHostWait1767530000000 } from './migrations/1767530000000-removal-host-wait';
import { RemovalForceDrain1767540000000 } from './migrations/1767540000000-removal-force-drain';
import { HostManifests1767550000000 } from './migrations/1767550000000-host-manifests';
import { HostMinimums1767560000000 } from './migrations/1767560000000-host-minimums';
import { LaunchJobs1767570000000 } from './migrations/1767570000000-launch-jobs';
import { InstallAdmission1767580000000 } from './migrations/1767580000000-install-admission';
import { Rollouts1767590000000 } from './migrations/1767590000000-rollouts';
import { RunningKubelet1767600000000 } from './migrations/1767600000000-running-kubelet';
import { ApplyRuns1767610000000 } from './migrations/1767610000000-apply-runs';
import { Webhooks1767620000000 } from './migrations/1767620000000-webhooks';
import { WebhookWaits1767630000000 } from './migrations/1767630000000-webhook-waits';
import { FourEyes1767640000000 } from './migrations/1767640000000-four-eyes';

/** Every migration, oldest first. The same list serves the real server and the embedded database. */
export const MIGRATIONS = [
  InitialSchema1764460800000, InstallRunsAndDiagnostics1764547200000, CsrDecisionsForced1764633600000, RemovalRuns1764720000000, UserSessionGeneration1764806400000,
  AgentChannel1765000000000,
  UserSessionsAndLoginLimits1765100000000,
  RunBoundBootstrapIdentities1765200000000,
  ClusterInsecureTransport1765300000000,
  ClusterAutoApproveRenewals1766100000000,
  NodeBatches1766200000000,
  AgentLaunchClaims1766500000000,
  Autoscaling1767000000000,
  CodedMessages1767100000000,
  ClusterArtifactVersion1767200000000,
  AutoscalingActivityCoded1767350000000,
  NodeGroupMemberCoded1767450000000,
  CsrDecisionCoded1767460000000,
  InstallRunEventCaps1767471250000,
  RemovalEventPhase1767480000000,
  ClusterReadiness1767490000000,
  JobWorkerHeartbeats1767500000000,
  NodeHealth1767510000000,
  Remediation1767520000000,
  RemovalHostWait1767530000000,
  RemovalForceDrain1767540000000,
  HostManifests1767550000000,
  HostMinimums1767560000000,
  LaunchJobs1767570000000,
  InstallAdmission1767580000000,
  Rollouts1767590000000,
  RunningKubelet1767600000000,
  ApplyRuns1767610000000,
  Webhooks1767620000000,
  WebhookWaits1767630000000,
  FourEyes1767640000000,
];

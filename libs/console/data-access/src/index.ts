// Apollo and errors
export { provideConsoleApollo } from './lib/apollo/provide-console-apollo';
export { LiveConnection, onReconnect } from './lib/apollo/live-connection';
export { LiveQuery, liveQuery } from './lib/apollo/live-query';
export { LiveSubscription, liveSubscription, type LiveSubscriptionHandlers } from './lib/apollo/live-subscription';
export { type ApiProblem, type ProblemCode, type Outcome, problemsOf, fieldProblems } from './lib/errors/api-problem';
export { ErrorReporter, type ErrorDisplay } from './lib/errors/error-reporter';
export { ConsoleErrorHandler, provideConsoleErrorHandler } from './lib/errors/console-error-handler';
export { Notifications, type Notification, type NotificationText, type NotificationTone } from './lib/notifications/notifications';
// Session
export { Session, type SessionData, type SessionUser, type SignedOutReason } from './lib/session/session';
export { AuthStore } from './lib/session/auth.store';
export { MySessionsStore, type UserSessionView } from './lib/session/my-sessions.store';
export { userAgentSummary } from './lib/session/user-agent';
export { requireSignedIn, requireSignedOut, requireRole, safeReturnUrl, SIGN_IN_PATH } from './lib/session/guards';
// Feature stores
export { type Cluster } from './lib/clusters/cluster';
export { ClusterListStore } from './lib/clusters/cluster-list.store';
export { ClusterDetailStore } from './lib/clusters/cluster-detail.store';
export { ClusterRegistrationStore } from './lib/clusters/cluster-registration.store';
export { UsersStore, type User } from './lib/users/users.store';
export { type NodeSummary, type NodeDetail, type InstallRunView, type StepEventView, byHostname } from './lib/nodes/node';
export { type SequencedEvent, mergeRunEvents, eventsByGroup } from './lib/runs/run-events';
export { NodeListStore } from './lib/nodes/node-list.store';
export { NodeDetailStore, type NodeAction } from './lib/nodes/node-detail.store';
export { NodeEntryStore } from './lib/nodes/node-entry.store';
export { NodeCertificatesStore } from './lib/nodes/node-certificates.store';
export { HostManifestStore } from './lib/nodes/host-manifest.store';
export { NodeBatchStore, type AddNodesResult, type NodeBatchView } from './lib/nodes/node-batch.store';
export { DiagnosticsDownload } from './lib/nodes/diagnostics-download';
export { CsrReviewStore, type Csr, type CsrVerdictView } from './lib/csrs/csr-review.store';
export { type RemovalPreviewView, type RemovalRunView, type RemovalEventView } from './lib/removals/removal';
export { RemovalProgressStore, type UncordonResult } from './lib/removals/removal-progress.store';
export { NodeRemovalStore } from './lib/removals/node-removal.store';
export { AuditLogStore, type AuditEntry } from './lib/audit/audit-log.store';
export { FailedJobsStore, type FailedJob } from './lib/jobs/failed-jobs.store';
export { ClusterRemediationStore, type ClusterRemediation } from './lib/clusters/cluster-remediation.store';
export { NodeGroupsStore, type AutoscalingActivityView, type NodeGroupHostView, type NodeGroupView } from './lib/autoscaling/node-groups.store';
export { AgentChannelStore } from './lib/agent-channel/agent-channel.store';

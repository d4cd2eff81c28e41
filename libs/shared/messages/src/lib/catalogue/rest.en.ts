/**
 * The rest of the API's texts: CSR approvals and their refusals, and a cluster's outages.
 * Spread into {@link EN}.
 */
export const REST_EN = {
  'csr.forceNeedsAdmin': 'approving with force needs the ADMIN role; you are {held}',
  'csr.forceReason.required': 'is required with force: say why the CSR is approved against the policy',
  'csr.forceReason.control': 'must not contain control characters',
  'csr.reasonWithoutForce': 'applies only to force: true (a forced approval); an approval the policy allows needs none',
  'csr.policyRefuses': 'the CSR policy would not approve {name}: {reason}; {hint}',
  'csr.policyRefuses.cannotOverride': 'force cannot override {checks}',
  'csr.policyRefuses.adminMayForce': 'an ADMIN may approve with force: true and a reason',
  'csr.forceBlocked': 'force cannot approve {name}: {blockers}; no approval goes past {count, plural, one {this check} other {these checks}}',
  'csr.forceBlocked.check': '{check} ({detail})',
  'csr.denyReasonEmpty': 'must not be empty: say why the CSR is denied',
  'csr.alreadyDecided': '{name} is already {state}; only a pending CSR can be {verb, select, approve {approved} other {denied}}',
  'cluster.outage.unreachable': "cluster {cluster} is unreachable: {error} (for {downFor} s; the next try is in {retryIn} s). Check that its API server is up and that the installer service can reach it (network, firewall, the API server's address).",
  'cluster.outage.errorAnswer': 'the API server of cluster {cluster} answers with an error: {error} (for {downFor} s; the next try is in {retryIn} s). Check the credentials and the permissions of the service account the cluster was registered with.',
  'cluster.outage.noFirstList': 'no complete answer within {seconds} s (the first list of its CSRs and Nodes has not arrived)',
  'cluster.outage.readTimeout': '{operation}: no answer within {seconds} s',
  'cluster.clientOptions': 'cluster {cluster}: {error}',
  'service.shuttingDown': 'the service is shutting down',
} as const satisfies Record<string, string>;

import type { GraphiQLProps } from 'graphiql';

type TabDefinition = NonNullable<GraphiQLProps['defaultTabs']>[number];

/**
 * Saved example operations for the mission, opened as tabs the first time (GraphiQL keeps the
 * user's own tabs afterwards). Replace the ids with those from the answers of the earlier tabs.
 */
export const EXAMPLE_TABS: TabDefinition[] = [
  {
    query: `# Sign in above (or put {"Authorization": "Bearer <token>"} in Headers), then run.
query Clusters {
  clusters { id name apiServerUrl vip csrAutoApprove }
}
`,
  },
  {
    query: `mutation RegisterCluster($input: RegisterClusterInput!) {
  registerCluster(input: $input) { id name apiServerUrl vip bootstrapStyle }
}
`,
    variables: JSON.stringify(
      { input: { name: 'prod', apiServerUrl: 'https://api.prod.example:6443', vip: '10.0.0.10', kubeconfig: '<kubeconfig YAML>', bootstrapStyle: 'OPENSHIFT' } },
      null,
      2,
    ),
  },
  {
    query: `mutation AddNode($input: AddNodeInput!) {
  addNode(input: $input) { id hostname ip status statusReason nextStep }
}

query Nodes($clusterId: ID!) {
  nodes(clusterId: $clusterId) { id hostname ip status statusReason }
}
`,
    variables: JSON.stringify({ clusterId: '<cluster id>', input: { clusterId: '<cluster id>', hostname: 'worker-1', ip: '10.0.0.21', sshPort: 22, sshUser: 'root', password: '<ssh password>' } }, null, 2),
  },
  {
    query: `# Start the subscription first (it runs until stopped), then run InstallNode in another tab.
subscription InstallProgress($nodeId: ID!) {
  installProgress(nodeId: $nodeId) {
    nodeId
    run { id status failedStep reason steps { step status progress message } }
    events { seq step status progress message occurredAt }
  }
}

mutation InstallNode($nodeId: ID!) {
  installNode(nodeId: $nodeId) { id status startStep }
}
`,
    variables: JSON.stringify({ nodeId: '<node id>' }, null, 2),
  },
  {
    query: `query PendingCsrs($clusterId: ID!) {
  csrs(clusterId: $clusterId, pendingOnly: true) {
    name signerName requester { username } node { hostname }
    verdict { decision reason checks { name passed detail } }
  }
}

mutation ApproveCsr($clusterId: ID!, $name: String!) {
  approveCsr(clusterId: $clusterId, name: $name) { name status decidedBy }
}
`,
    variables: JSON.stringify({ clusterId: '<cluster id>', name: '<csr name>' }, null, 2),
  },
  {
    query: `query RemovalPreview($nodeId: ID!) {
  removalPreview(nodeId: $nodeId) { allowed refusal counts { evict skip refuse } pods { pod action reason } warnings }
}

subscription RemovalProgress($nodeId: ID!) {
  removalProgress(nodeId: $nodeId) {
    run { status phase reason }
    events { seq kind pod message occurredAt }
  }
}

mutation RemoveNode($nodeId: ID!) {
  removeNode(nodeId: $nodeId) { id status phase }
}
`,
    variables: JSON.stringify({ nodeId: '<node id>' }, null, 2),
  },
];

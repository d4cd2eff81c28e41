/**
 * Every row of `npm run bench`, in the order of the table. A row is a module of bench/ exporting
 * `benchRows(options: BenchOptions): Promise<Figure[]>` (bench/support/row.ts). A listed module
 * that is not in the tree (yet) shows as "not available" instead of failing the run.
 */
export interface RowEntry {
  /** The name on the command line: `npm run bench -- <id>`. */
  readonly id: string;
  /** The module's file, relative to bench/. */
  readonly module: string;
  readonly title: string;
  /** Uses lab hosts (network namespaces, root): left out by `--skip-lab` and the smoke test. */
  readonly needsLab: boolean;
}

export const ROWS: readonly RowEntry[] = [
  { id: 'scale-out', module: 'scale-out.ts', title: 'Scale-out: lab hosts at once', needsLab: true },
  { id: 'ingestion', module: 'agent-ingestion.ts', title: 'Agent event ingestion and live delivery', needsLab: false },
  { id: 'fleet', module: 'fleet.ts', title: 'Fleet: simulated installs at once on one API process', needsLab: false },
  { id: 'event-bus', module: 'event-bus.ts', title: 'Event bus between replicas: batched NOTIFY', needsLab: false },
  { id: 'csr', module: 'csr-approval-latency.ts', title: 'CSR auto-approval latency', needsLab: false },
  { id: 'drain', module: 'drain.ts', title: 'drainNode vs kubectl drain', needsLab: false },
  { id: 'removal', module: 'remove-node.ts', title: 'removeNode vs kubectl drain + delete node', needsLab: false },
  { id: 'artifacts', module: 'artifact-serving.ts', title: 'Artifact serving vs nginx', needsLab: false },
  { id: 'agent-channel', module: 'agent-channel-tls.ts', title: 'Agent channel: HTTPS vs plain HTTP', needsLab: false },
  { id: 'memory', module: 'memory-at-size.ts', title: 'API memory at 1,000 nodes', needsLab: false },
  { id: 'install-footprint', module: 'install-footprint.ts', title: 'API memory with 5 installs running; Postgres per install run', needsLab: true },
  { id: 'console', module: 'console-at-size.ts', title: 'Console at 5,000 nodes', needsLab: false },
  { id: 'agent', module: 'agent-copy.ts', title: 'Agent: size, gzip size, copy to 20 hosts at once', needsLab: true },
  { id: 'graphql-validation', module: 'graphql-validation.ts', title: 'GraphQL validation, worst admitted document', needsLab: false },
];

import { type TypedDocumentNode, gql } from '@apollo/client';
import { describe, expect, it } from 'vitest';
import { createConsoleCache } from './console-cache';

interface Diagnostics {
  readonly __typename: 'InstallDiagnostics';
  readonly size: number;
  readonly url: string;
  readonly uploadedAt: string;
}
interface Run {
  readonly __typename: 'InstallRun';
  readonly id: string;
  readonly status: string;
  readonly diagnostics: Diagnostics | null;
}
interface NodeData {
  readonly node: { readonly __typename: 'Node'; readonly id: string; readonly installRuns: readonly Run[] };
}
interface ProgressData {
  readonly installProgress: { readonly __typename: 'InstallProgress'; readonly nodeId: string; readonly run: Run };
}

const RUN_FIELDS = 'id status diagnostics { size url uploadedAt }';
const NODE: TypedDocumentNode<NodeData, { id: string }> = gql`query Node($id: ID!) { node(id: $id) { id installRuns { ${RUN_FIELDS} } } }`;
const PROGRESS: TypedDocumentNode<ProgressData, { nodeId: string }> = gql`subscription InstallProgress($nodeId: ID!) { installProgress(nodeId: $nodeId) { nodeId run { ${RUN_FIELDS} } } }`;

const bundle = (size: number): Diagnostics => ({ __typename: 'InstallDiagnostics', size, url: '/api/install-runs/r-1/diagnostics.tar.gz', uploadedAt: '2026-12-02T08:00:00.000Z' });
const run = (diagnostics: Diagnostics | null): Run => ({ __typename: 'InstallRun', id: 'r-1', status: 'FAILED', diagnostics });
const nodeAnswer = (...runs: Run[]): NodeData => ({ node: { __typename: 'Node', id: 'n-1', installRuns: runs } });
const progressMessage = (diagnostics: Diagnostics | null): ProgressData => ({ installProgress: { __typename: 'InstallProgress', nodeId: 'n-1', run: run(diagnostics) } });

describe("the console's cache", () => {
  it('keeps an uploaded diagnostics bundle when the node query sent before the upload is answered after its live message', () => {
    const cache = createConsoleCache();
    cache.writeQuery({ query: NODE, variables: { id: 'n-1' }, data: nodeAnswer(run(null)) });
    cache.writeQuery({ query: PROGRESS, variables: { nodeId: 'n-1' }, data: progressMessage(bundle(2048)) });
    cache.writeQuery({ query: NODE, variables: { id: 'n-1' }, data: nodeAnswer(run(null)) });
    expect(cache.readQuery({ query: NODE, variables: { id: 'n-1' } })?.node.installRuns[0]?.diagnostics?.size).toBe(2048);
  });

  it('shows a bundle uploaded again in place of the first', () => {
    const cache = createConsoleCache();
    cache.writeQuery({ query: PROGRESS, variables: { nodeId: 'n-1' }, data: progressMessage(bundle(2048)) });
    cache.writeQuery({ query: NODE, variables: { id: 'n-1' }, data: nodeAnswer(run(bundle(4096))) });
    expect(cache.readQuery({ query: NODE, variables: { id: 'n-1' } })?.node.installRuns[0]?.diagnostics?.size).toBe(4096);
  });

  it("shows no bundle for a run that has none, and takes a node's run list whole", () => {
    const cache = createConsoleCache();
    cache.writeQuery({ query: NODE, variables: { id: 'n-1' }, data: nodeAnswer(run(null), { ...run(null), id: 'r-2' }) });
    cache.writeQuery({ query: NODE, variables: { id: 'n-1' }, data: nodeAnswer({ ...run(null), id: 'r-2' }) });
    const runs = cache.readQuery({ query: NODE, variables: { id: 'n-1' } })?.node.installRuns;
    expect(runs?.map((listed) => [listed.id, listed.diagnostics])).toEqual([['r-2', null]]);
  });
});

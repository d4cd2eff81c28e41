import { CombinedGraphQLErrors } from '@apollo/client';
import { describe, expect, it } from 'vitest';
import { installRun, stepEvent, storeUnderTest } from '../../testing';
import type { InstallRunView } from './node';
import { NodeDetailStore } from './node-detail.store';

function node(status: string, installRuns: InstallRunView[] = []) {
  return { id: 'n-1', clusterId: 'c-1', hostname: 'worker-1', status, installRuns };
}

function opened(status = 'READY_TO_INSTALL', runs: InstallRunView[] = []) {
  const under = storeUnderTest(NodeDetailStore);
  under.store.select('c-1', 'n-1');
  under.api.answer('Node', { data: { node: node(status, runs) } });
  return under;
}

const seqs = (store: NodeDetailStore) => store.currentEvents().map((event) => event.seq);

describe('a node page: its record, its runs and the live install', () => {
  it('shows the node once it arrives, and subscribes to its changes and its install progress', async () => {
    const { store, api } = opened();
    await expect.poll(() => store.node()?.status).toBe('READY_TO_INSTALL');
    expect(api.subscription('InstallProgress').variables).toEqual({ nodeId: 'n-1' });
    expect(api.subscription('NodeChanged').variables).toEqual({ clusterId: 'c-1', nodeId: 'n-1' });
    expect(store.live()).toBe(true);
  });

  it('shows a change made between reading the node and subscribing: the stream\'s first message, the node as it is now, reads it again', async () => {
    const { store, api } = opened('INSTALLING');
    await expect.poll(() => store.node()?.status).toBe('INSTALLING');
    api.subscription('NodeChanged').send({ nodeChanged: { nodeId: 'n-1', node: node('JOINED') } });
    expect(api.pending('Node')).toHaveLength(1);
    api.answer('Node', { data: { node: node('JOINED') } });
    await expect.poll(() => store.node()?.status).toBe('JOINED');
  });

  it('shows a run started elsewhere as the current one, with its events in order and each once', async () => {
    const { store, api } = opened('READY_TO_INSTALL', [installRun({ id: 'run-0', status: 'FAILED' })]);
    await expect.poll(() => store.runs().length).toBe(1);
    const progress = api.subscription('InstallProgress');
    const run = installRun({ id: 'run-1' });
    progress.send({ installProgress: { nodeId: 'n-1', run, events: [stepEvent(1, 'PREFLIGHT'), stepEvent(2, 'PREFLIGHT')] } });
    expect(store.currentRun()?.id).toBe('run-1');
    expect(store.previousRuns().map((previous) => previous.id)).toEqual(['run-0']);
    progress.send({ installProgress: { nodeId: 'n-1', run, events: [stepEvent(4, 'DOWNLOAD_BINARIES')] } });
    // After a reconnect the first message repeats every event so far, and one was missed meanwhile.
    progress.send({ installProgress: { nodeId: 'n-1', run, events: [stepEvent(1, 'PREFLIGHT'), stepEvent(2, 'PREFLIGHT'), stepEvent(3, 'PREFLIGHT', { status: 'SUCCEEDED' }), stepEvent(4, 'DOWNLOAD_BINARIES')] } });
    expect(seqs(store)).toEqual([1, 2, 3, 4]);
  });

  it('does not list a run twice once the node answers with it', async () => {
    const { store, api } = opened();
    await expect.poll(() => store.node()).not.toBeNull();
    const run = installRun({ id: 'run-1' });
    api.subscription('InstallProgress').send({ installProgress: { nodeId: 'n-1', run, events: [] } });
    store.reload();
    api.answer('Node', { data: { node: node('INSTALLING', [run]) } });
    await expect.poll(() => store.node()?.status).toBe('INSTALLING');
    expect(store.runs().map((listed) => listed.id)).toEqual(['run-1']);
  });

  it('asks for the node again when it changed, and says it is gone when it was deleted', async () => {
    const { store, api } = opened();
    await expect.poll(() => store.node()).not.toBeNull();
    const changes = api.subscription('NodeChanged');
    changes.send({ nodeChanged: { nodeId: 'n-2', node: null } });
    expect(store.deleted()).toBe(false);
    expect(api.pending('Node')).toHaveLength(0);
    changes.send({ nodeChanged: { nodeId: 'n-1', node: node('ADDING') } });
    expect(api.pending('Node')).toHaveLength(1);
    changes.send({ nodeChanged: { nodeId: 'n-1', node: null } });
    expect(store.deleted()).toBe(true);
  });

  it('shows the run Install started at once, busy while sending, and asks for the node afterwards', async () => {
    const { store, api } = opened();
    await expect.poll(() => store.node()).not.toBeNull();
    const sent = store.install();
    expect(store.busy()).toBe('install');
    api.answer('InstallNode', { data: { installNode: installRun({ id: 'run-7' }) } });
    const outcome = await sent;
    expect(outcome.ok).toBe(true);
    expect(store.busy()).toBeNull();
    expect(store.currentRun()?.id).toBe('run-7');
    expect(store.hasEventsOf('run-7')).toBe(true);
    expect(api.pending('Node')).toHaveLength(1);
  });

  it('returns a refused action with the API problem and leaves the runs alone', async () => {
    const { store, api } = opened();
    await expect.poll(() => store.node()).not.toBeNull();
    const sent = store.retry();
    api.answer('RetryInstall', { error: new CombinedGraphQLErrors({ errors: [{ message: 'node is not in a state that allows a retry', extensions: { code: 'CONFLICT' } }] }) });
    const outcome = await sent;
    expect(outcome).toMatchObject({ ok: false, problems: [{ code: 'CONFLICT', message: 'node is not in a state that allows a retry' }] });
    expect(store.runs()).toEqual([]);
    expect(store.busy()).toBeNull();
  });

  it('shows the credentials dialog the problem of the field it names, in the field’s words', async () => {
    const { store, api } = opened('AUTH_FAILED');
    await expect.poll(() => store.node()).not.toBeNull();
    const sent = store.updateCredentials({ sshUser: 'root', password: 'x' } as never);
    api.answer('UpdateNodeCredentials', {
      error: new CombinedGraphQLErrors({ errors: [{ message: 'input.password: must not be empty', extensions: { code: 'BAD_USER_INPUT', field: 'input.password', problem: 'must not be empty' } }] }),
    });
    await sent;
    expect(Object.keys(store.fieldErrors())).toEqual(['password']);
    store.clearDialogProblems();
    expect(store.fieldErrors()).toEqual({});
  });

  it('loads an earlier run’s events once, on demand', async () => {
    const { store, api } = opened('INSTALL_FAILED', [installRun({ id: 'run-0', status: 'FAILED' }), installRun({ id: 'run-1', status: 'FAILED' })]);
    await expect.poll(() => store.runs().length).toBe(2);
    const loading = store.loadRun('run-0');
    expect(store.isLoadingRun('run-0')).toBe(true);
    void store.loadRun('run-0');
    expect(api.pending('InstallRun')).toHaveLength(1);
    api.answer('InstallRun', { data: { installRun: { id: 'run-0', events: [stepEvent(2, 'PREFLIGHT'), stepEvent(1, 'PREFLIGHT')] } } });
    await loading;
    expect(store.eventsOf('run-0').map((event) => event.seq)).toEqual([1, 2]);
    expect(store.isLoadingRun('run-0')).toBe(false);
  });
});

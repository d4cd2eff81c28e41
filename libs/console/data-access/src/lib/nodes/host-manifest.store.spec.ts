import { CombinedGraphQLErrors } from '@apollo/client';
import { describe, expect, it } from 'vitest';
import type { HostManifestFieldsFragment } from '@ccos/shared/api-schema';
import { storeUnderTest } from '../../testing';
import { HostManifestStore } from './host-manifest.store';

const A = 'a'.repeat(64);
const manifest = (state: HostManifestFieldsFragment['state'], drift: HostManifestFieldsFragment['drift'] = []): HostManifestFieldsFragment => ({
  nodeId: 'n-1', runId: 'r-1', state, onClusterSet: true, artifactSetVersion: '4.14.3', recordedAt: '2026-12-06T10:00:00Z', inspectedAt: null,
  files: [{ path: '/etc/systemd/system/kubelet.service', sha256: A, step: 'APPLY_IGNITION' }], runningAtInstall: { kernelRelease: '5.14.0-427.el9.x86_64', kubeletVersion: 'v1.31.4', kubeletFlags: ['--v=2'] }, runningNow: null, runningChanges: [], drift,
  inspectionProblem: null, inspectionProblemCode: null, inspectionProblemParams: null,
});

describe('what a node\'s host runs', () => {
  it('reads the record, shows what an inspection found at once, and reads again when asked', async () => {
    const { store, api } = storeUnderTest(HostManifestStore);
    store.select('n-1');
    expect(api.pending('HostManifest')[0]?.variables).toEqual({ nodeId: 'n-1' });
    api.answer('HostManifest', { data: { hostManifest: manifest('UNINSPECTED') } });
    await expect.poll(() => store.manifest()?.state).toBe('UNINSPECTED');

    const inspecting = store.inspect();
    expect(store.busy()).toBe(true);
    expect(api.pending('InspectNode')[0]?.variables).toEqual({ nodeId: 'n-1' });
    api.answer('InspectNode', { data: { inspectNode: manifest('DRIFTED', [{ path: '/etc/systemd/system/kubelet.service', expected: A, found: null }]) } });
    expect((await inspecting).ok).toBe(true);
    expect(store.busy()).toBe(false);
    expect(store.manifest()?.drift.map((file) => file.path)).toEqual(['/etc/systemd/system/kubelet.service']);

    store.reload();
    expect(api.pending('HostManifest')).toHaveLength(1);
  });

  it('answers a refused inspection with the API\'s problem and keeps what it showed', async () => {
    const { store, api } = storeUnderTest(HostManifestStore);
    store.select('n-1');
    api.answer('HostManifest', { data: { hostManifest: manifest('CURRENT') } });
    await expect.poll(() => store.manifest()?.state).toBe('CURRENT');
    const inspecting = store.inspect();
    api.answer('InspectNode', { error: new CombinedGraphQLErrors({ errors: [{ message: 'no install recorded what worker-1 runs', extensions: { code: 'FAILED_PRECONDITION' } }] }) });
    const outcome = await inspecting;
    expect(outcome.ok ? null : outcome.problems[0]?.code).toBe('FAILED_PRECONDITION');
    expect(store.manifest()?.state).toBe('CURRENT');
  });
});

import 'reflect-metadata';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHIPPED_RBAC } from '@ccos/api/data-access-kube/testing';
import { formatServerText } from '@ccos/shared/messages';
// The cluster of these tests is the in-process Kubernetes API simulator (a test-only tool).
import { type KubeSim, startKubeSim } from '@ccos/tools/kube-sim';
import { type ApiHarness, startApiHarness, writeStandInArtifactSet } from '../testing/api-test-harness';

interface Activity {
  kind: string;
  reason: string;
  reasonCode: string | null;
  reasonParams: Record<string, unknown> | null;
}

describe('node groups: a decision\'s reason in the audit and the activity, by code', () => {
  let harness: ApiHarness;
  let sim: KubeSim;
  let clusterId = '';

  beforeAll(async () => {
    sim = await startKubeSim({ seed: SHIPPED_RBAC });
    // The spare is on a loopback port nobody listens on: its checks end UNREACHABLE without leaving the machine.
    const artifacts = await writeStandInArtifactSet(await mkdtemp(join(tmpdir(), 'ccos-group-artifacts-')));
    harness = await startApiHarness({ AGENT_BINARY: '/bin/true', SSH_CONNECT_TIMEOUT_MS: '1000', ARTIFACTS_DIR: artifacts });
    clusterId = await harness.registerSimCluster(sim);
  });
  afterAll(async () => {
    await harness?.stop();
    await sim?.stop();
  });

  it('records an added spare with its reason in English and, from its code, in Chinese', async () => {
    const admin = await harness.tokenFor('ADMIN');
    const created = await harness.gql<{ createNodeGroup: { id: string } }>(
      'mutation($input: CreateNodeGroupInput!) { createNodeGroup(input: $input) { id } }',
      { input: { clusterId, name: 'pool-a', maxSize: 2, profile: { cpuCores: 4, memoryBytes: 8 * 1024 ** 3 } } },
      admin,
    );
    expect(created.errors).toBeUndefined();
    const groupId = created.data?.createNodeGroup.id ?? '';
    const added = await harness.gql(
      'mutation($input: AddSpareInput!) { addNodeGroupSpare(input: $input) { nodeId } }',
      { input: { groupId, hostname: 'spare-1', ip: '127.0.0.1', sshPort: 1, password: 'spare-password-1' } },
      admin,
    );
    expect(added.errors).toBeUndefined();
    const group = await harness.gql<{ nodeGroup: { activity: Activity[] } }>(
      'query($id: ID!) { nodeGroup(id: $id) { activity { kind reason reasonCode reasonParams } } }',
      { id: groupId },
      admin,
    );
    const spare = group.data?.nodeGroup.activity.find((entry) => entry.kind === 'SPARE_ADDED');
    expect(spare?.reason).toBe('added as a spare of pool-a by admin; checking the host');
    expect(formatServerText('zh-CN', spare?.reasonCode, spare?.reasonParams, null)).toBe('由 admin 添加为 pool-a 的备用主机；正在检查主机');
    const audit = await harness.api.dataSource.query(`SELECT detail->>'reasonCode' AS code FROM audit_log WHERE action = 'autoscaling.spare_added'`);
    expect(audit).toEqual([{ code: 'autoscaling.spareAdded' }]);
  });
});

import 'reflect-metadata';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { SHIPPED_RBAC } from '@ccos/api/data-access-kube/testing';
import { formatServerText } from '@ccos/shared/messages';
// The cluster of these tests is the in-process Kubernetes API simulator (a test-only tool).
import { type KubeSim, startKubeSim } from '@ccos/tools/kube-sim';
import { type ApiHarness, startApiHarness, writeStandInArtifactSet } from '../testing/api-test-harness';

interface Host {
  hostname: string;
  state: string;
  reason: string | null;
  reasonCode: string | null;
  reasonParams: Record<string, unknown> | null;
}

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

  it('words where a pool member stands by code: the spare whose checks failed, in its row and in the decision', async () => {
    const admin = await harness.tokenFor('ADMIN');
    const created = await harness.gql<{ createNodeGroup: { id: string } }>(
      'mutation($input: CreateNodeGroupInput!) { createNodeGroup(input: $input) { id } }',
      { input: { clusterId, name: 'pool-b', maxSize: 1, profile: { cpuCores: 4, memoryBytes: 8 * 1024 ** 3 } } },
      admin,
    );
    expect(created.errors).toBeUndefined();
    const client = createClient({ url: `${harness.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${admin}` } });
    type Group = { name: string; hosts: Host[]; activity: Activity[] };
    const unusable = new Promise<Group>((resolve, reject) => {
      client.subscribe<{ nodeGroupsChanged: Group[] }>(
        { query: 'subscription($c: ID!) { nodeGroupsChanged(clusterId: $c) { name hosts { hostname state reason reasonCode reasonParams } activity { kind reason reasonCode reasonParams } } }', variables: { c: clusterId } },
        {
          next: (update) => {
            const group = update.data?.nodeGroupsChanged.find((entry) => entry.name === 'pool-b');
            // The host's state and the decision in the activity are written one after the other.
            if (group?.hosts.some((host) => host.state === 'UNUSABLE') && group.activity.some((entry) => entry.kind === 'SPARE_UNUSABLE')) {
              resolve(group);
            }
          },
          error: reject,
          complete: () => undefined,
        },
      );
    });
    try {
      const added = await harness.gql(
        'mutation($input: AddSpareInput!) { addNodeGroupSpare(input: $input) { nodeId } }',
        { input: { groupId: created.data?.createNodeGroup.id, hostname: 'spare-2', ip: '127.0.0.2', sshPort: 1, password: 'spare-password-2' } },
        admin,
      );
      expect(added.errors).toBeUndefined();
      const group = await unusable;
      const host = group.hosts.find((entry) => entry.hostname === 'spare-2');
      expect(host?.reason).toMatch(/^addNode's checks failed \(UNREACHABLE\): /);
      expect(host?.reasonCode).toBe('autoscaling.member.checksFailed');
      expect(host?.reasonParams).toMatchObject({ status: { code: 'node.statusName', params: { status: 'UNREACHABLE' } }, reason: { code: 'ssh.unreachable' } });
      expect(formatServerText('zh-CN', host?.reasonCode, host?.reasonParams, null)).toMatch(/^录入节点的检查未通过（无法连接）：/);
      const decision = group.activity.find((entry) => entry.kind === 'SPARE_UNUSABLE');
      expect(decision?.reasonCode).toBe('autoscaling.member.checksFailed');
      expect(decision?.reason).toBe(host?.reason);
    } finally {
      await client.dispose();
    }
  });

  it('scales a group up and down by hand for an OPERATOR, in their name, within its bounds; a VIEWER may not', async () => {
    const [admin, operator, viewer] = [await harness.tokenFor('ADMIN'), await harness.tokenFor('OPERATOR'), await harness.tokenFor('VIEWER')];
    const created = await harness.gql<{ createNodeGroup: { id: string } }>(
      'mutation($input: CreateNodeGroupInput!) { createNodeGroup(input: $input) { id } }',
      { input: { clusterId, name: 'pool-c', maxSize: 1, profile: { cpuCores: 2, memoryBytes: 4 * 1024 ** 3 } } },
      admin,
    );
    const groupId = created.data?.createNodeGroup.id ?? '';
    const scaleUp = 'mutation($g: ID!, $by: Int!) { scaleUpNodeGroup(groupId: $g, increaseBy: $by) { targetSize activity { kind actor reasonCode } } }';
    type Scaled = { scaleUpNodeGroup: { targetSize: number; activity: Array<{ kind: string; actor: string; reasonCode: string | null }> } };

    const forbidden = await harness.gql(scaleUp, { g: groupId, by: 1 }, viewer);
    expect(forbidden.errors?.[0]?.extensions?.['code']).toBe('FORBIDDEN');
    const zero = await harness.gql(scaleUp, { g: groupId, by: 0 }, operator);
    expect(zero.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'increaseBy', problemCode: 'autoscaling.refusal.increaseNotPositive' });

    // No spare is ready: the target rises all the same and the group says it is out of spares, in the operator's name.
    const scaled = await harness.gql<Scaled>(scaleUp, { g: groupId, by: 1 }, operator);
    expect(scaled.errors).toBeUndefined();
    expect(scaled.data?.scaleUpNodeGroup.targetSize).toBe(1);
    const [operatorName] = (scaled.data?.scaleUpNodeGroup.activity ?? []).filter((entry) => entry.kind === 'OUT_OF_RESOURCES').map((entry) => entry.actor);
    expect(operatorName).toBe('operator');
    const beyond = await harness.gql(scaleUp, { g: groupId, by: 1 }, operator);
    expect(beyond.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'increaseBy', problemCode: 'autoscaling.refusal.increaseTooLarge' });

    const down = await harness.gql('mutation($g: ID!, $n: ID!) { scaleDownNodeGroup(groupId: $g, nodeId: $n) { targetSize } }', { g: groupId, n: '00000000-0000-4000-8000-000000000000' }, operator);
    expect(down.errors?.[0]?.extensions?.['code']).toBe('NOT_FOUND');
  });

  it('scales a group down by the member it chooses itself: the NotReady one before the newest, saying why', async () => {
    const [admin, operator] = [await harness.tokenFor('ADMIN'), await harness.tokenFor('OPERATOR')];
    const created = await harness.gql<{ createNodeGroup: { id: string } }>(
      'mutation($input: CreateNodeGroupInput!) { createNodeGroup(input: $input) { id } }',
      { input: { clusterId, name: 'pool-d', maxSize: 3, profile: { cpuCores: 2, memoryBytes: 4 * 1024 ** 3 } } },
      admin,
    );
    const groupId = created.data?.createNodeGroup.id ?? '';
    const db = harness.api.dataSource;
    // Three running members; d-1 (the oldest) is NotReady, d-3 the newest.
    for (const [index, ready] of [[1, 'False'], [2, 'True'], [3, 'True']] as const) {
      const nodeId = `00000000-0000-4000-8000-00000000d00${index}`;
      await db.query(
        `INSERT INTO nodes (id, cluster_id, hostname, ip, status, provider_id, ready_status, ready_since, ever_joined) VALUES ($1, $2, $3, $4, 'JOINED', $5, $6, now() - interval '10 minutes', true)`,
        [nodeId, clusterId, `d-${index}`, `10.0.4.${index}`, `ccos://sim/${nodeId}`, ready],
      );
      await db.query(`INSERT INTO node_group_members (node_id, group_id, state, created_at) VALUES ($1, $2, 'RUNNING', now() - make_interval(hours => $3))`, [nodeId, groupId, 10 - index]);
    }
    await db.query('UPDATE node_groups SET target_size = 3 WHERE id = $1', [groupId]);

    const down = await harness.gql<{ scaleDownNodeGroup: { targetSize: number; activity: Array<{ kind: string; hostname: string | null; actor: string; reason: string; reasonCode: string | null; reasonParams: Record<string, unknown> | null }> } }>(
      'mutation($g: ID!) { scaleDownNodeGroup(groupId: $g) { targetSize activity { kind hostname actor reason reasonCode reasonParams } } }',
      { g: groupId },
      operator,
    );
    expect(down.errors).toBeUndefined();
    expect(down.data?.scaleDownNodeGroup.targetSize).toBe(2);
    const chosen = down.data?.scaleDownNodeGroup.activity.find((entry) => entry.kind === 'VICTIM_CHOSEN');
    expect(chosen).toMatchObject({ hostname: 'd-1', actor: 'operator', reason: 'chose d-1 to remove: it is unhealthy', reasonCode: 'autoscaling.victim' });
    expect(formatServerText('zh-CN', chosen?.reasonCode, chosen?.reasonParams, chosen?.reason)).toBe('选择移除 d-1：它不健康');
    expect(down.data?.scaleDownNodeGroup.activity.filter((entry) => entry.kind === 'DELETE').map((entry) => entry.hostname)).toEqual(['d-1']);
  });
});

import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '@ccos/shared/util-timing/testing';
import { freePort } from '../support/api-process';
import { type CloudProviderClient, PROTO_DIR, callProvider, cloudProviderClientConstructor } from '../support/autoscaler-client';
import { type ScaleOutWorld, startScaleOutWorld } from '../support/scale-out-world';

/**
 * cluster-autoscaler's loop, played by a client generated at run time from the same
 * externalgrpc.proto the service serves, against the built API, kube-sim and lab hosts: a
 * scale-up of 2 from a pool of spares, the Nodes Ready with the group's providerID, labels and
 * taints, the autoscaler's cordon and evictions, the scale-down, and the hosts back in the pool.
 */

const CLI = resolve('dist/apps/cli/ccos-scaler.mjs');
const GROUP = 'pool-a';
const EMPTY_GROUP = 'pool-empty';
const GIB = 1024 ** 3;

interface Instance { id: string; status: { instanceState: string; errorInfo: { errorCode: string; errorMessage: string; instanceErrorClass: number } } }
interface GroupView {
  id: string; name: string; targetSize: number; currentSize: number; spares: number;
  hosts: Array<{ nodeId: string; hostname: string; state: string; reason: string | null; providerId: string | null }>;
  activity: Array<{ kind: string; hostname: string | null; reason: string }>;
}
const GROUP_FIELDS = 'id name targetSize currentSize spares hosts { nodeId hostname state reason providerId } activity { kind hostname reason }';

const call = callProvider;

describe('cluster-autoscaler externalgrpc provider over a pool of spare lab hosts', () => {
  let world: ScaleOutWorld;
  let grpcPort: number;
  let client: CloudProviderClient;
  let connection: { address: string; caCertificate: string; clientCertificate: string; clientKey: string; cloudConfig: string };
  const CloudProvider = cloudProviderClientConstructor();

  const group = async (id: string): Promise<GroupView> => {
    const answer = await world.gql<{ nodeGroup: GroupView }>(`query($id: ID!) { nodeGroup(id: $id) { ${GROUP_FIELDS} } }`, { id });
    if (!answer.data?.nodeGroup) {
      throw new Error(JSON.stringify(answer.errors));
    }
    return answer.data.nodeGroup;
  };
  const until = <T>(what: string, probe: () => Promise<T | null>, timeoutMs: number, describe: () => Promise<unknown> = async () => null): Promise<T> =>
    eventually(probe, {
      what,
      timeoutMs,
      intervalMs: 250,
      tolerate: () => true,
      context: async () => `last seen: ${JSON.stringify(await describe().catch(() => null))}\n${world.api.output().slice(-4000)}`,
    });
  const labHost = (hostname: string) => {
    const host = world.lab.hosts.find((candidate) => candidate.hostname === hostname);
    if (!host) {
      throw new Error(`no lab host ${hostname}`);
    }
    return host;
  };
  const kube = (method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<{ status: number; body: Record<string, unknown> }> =>
    new Promise((resolve, reject) => {
      const url = new URL(path, world.sim.url);
      const req = request(url, { method, ca: world.sim.caCertPem, headers: { authorization: `Bearer ${world.sim.adminToken}`, 'content-type': contentType, accept: 'application/json' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown> }));
      });
      req.on('error', reject);
      req.end(body === undefined ? undefined : JSON.stringify(body));
    });
  const simNodes = () => world.sim.store.list(world.sim.resource('nodes')) as unknown as Array<{
    metadata: { name: string; labels?: Record<string, string> };
    spec?: { providerID?: string; unschedulable?: boolean; taints?: Array<{ key: string; value?: string; effect: string }> };
    status?: { conditions?: Array<{ type: string; status: string }> };
  }>;

  beforeAll(async () => {
    grpcPort = await freePort('127.0.0.1');
    world = await startScaleOutWorld({
      hosts: 3,
      name: 'autoscaling-externalgrpc',
      hostnamePrefix: 'spare-',
      csrAutoApprove: true,
      apiEnv: { AUTOSCALER_GRPC_PORT: String(grpcPort), AUTOSCALER_GRPC_HOST: '127.0.0.1', AUTOSCALER_GRPC_ADDRESS: `127.0.0.1:${grpcPort}` },
    });
  }, 300_000);
  afterAll(async () => {
    client?.close();
    await world?.stop();
  });

  let groupId = '';
  let emptyGroupId = '';

  it('keeps added hosts as checked, clean spares of a node group, not installed', async () => {
    const created = await world.gql<{ createNodeGroup: GroupView }>(`mutation($input: CreateNodeGroupInput!) { createNodeGroup(input: $input) { ${GROUP_FIELDS} } }`, {
      input: {
        clusterId: world.clusterId, name: GROUP, minSize: 0, maxSize: 3,
        labels: [{ key: 'pool', value: 'a' }], taints: [{ key: 'dedicated', value: 'batch', effect: 'NoSchedule' }],
        profile: { cpuCores: 2, memoryBytes: 4 * GIB, ephemeralStorageBytes: 20 * GIB, maxPods: 110, arch: 'amd64' },
      },
    });
    expect(created.errors).toBeUndefined();
    groupId = created.data?.createNodeGroup.id ?? '';
    const empty = await world.gql<{ createNodeGroup: GroupView }>(`mutation($input: CreateNodeGroupInput!) { createNodeGroup(input: $input) { id } }`, {
      input: { clusterId: world.clusterId, name: EMPTY_GROUP, minSize: 0, maxSize: 2, profile: { cpuCores: 4, memoryBytes: 8 * GIB } },
    });
    emptyGroupId = empty.data?.createNodeGroup.id ?? '';
    for (const host of world.lab.hosts) {
      const added = await world.gql(`mutation($input: AddSpareInput!) { addNodeGroupSpare(input: $input) { nodeId state } }`, {
        input: { groupId, hostname: host.hostname, ip: host.ip, sshPort: host.port, sshUser: host.user, password: host.password },
      });
      expect(added.errors).toBeUndefined();
    }
    // A spare's activity entry is written just after its state: wait for both.
    const ready = await until('3 spares, each with its SPARE_READY entry', async () => {
      const view = await group(groupId);
      return view.spares === 3 && view.activity.filter((entry) => entry.kind === 'SPARE_READY').length === 3 ? view : null;
    }, 120_000);
    expect(ready.hosts.map((host) => host.state)).toEqual(['SPARE', 'SPARE', 'SPARE']);
    expect(simNodes()).toHaveLength(0);
    const nodes = await world.gql<{ nodes: Array<{ status: string }> }>('query($c: ID!) { nodes(clusterId: $c) { status } }', { c: world.clusterId });
    expect(nodes.data?.nodes.map((node) => node.status)).toEqual(['READY_TO_INSTALL', 'READY_TO_INSTALL', 'READY_TO_INSTALL']);

    const issued = await world.gql<{ issueAutoscalerConnection: typeof connection }>(
      'mutation($c: ID!) { issueAutoscalerConnection(clusterId: $c) { address caCertificate clientCertificate clientKey cloudConfig } }', { c: world.clusterId },
    );
    expect(issued.errors).toBeUndefined();
    const answer = issued.data?.issueAutoscalerConnection;
    if (!answer) {
      throw new Error(JSON.stringify(issued.errors));
    }
    connection = answer;
    expect(connection.cloudConfig).toContain(`address: "127.0.0.1:${grpcPort}"`);
    expect(connection.cloudConfig).toMatch(/cacert: ".+ca\.crt"/);
    // The CLI issues another client certificate for the same cluster and writes the Secret's files.
    const dir = await mkdtemp(join(tmpdir(), 'ccos-autoscaler-'));
    const printed = await new Promise<{ code: number | null; stdout: string }>((done, fail) => {
      const child = spawn(process.execPath, [CLI, 'autoscaler', 'connection', '--cluster', 'lab', '--dir', dir], {
        env: { PATH: process.env['PATH'] ?? '', HOME: dir, LANG: 'en_US.UTF-8', CCOS_SERVER: world.api.url, CCOS_TOKEN: world.token },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let stdout = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.on('error', fail);
      child.on('close', (code) => done({ code, stdout }));
    });
    expect(printed.code).toBe(0);
    expect(printed.stdout).toContain(`address: "127.0.0.1:${grpcPort}"`);
    expect(printed.stdout).not.toContain('PRIVATE KEY');
    expect((await stat(join(dir, 'tls.key'))).mode & 0o777).toBe(0o600);
    const files = Object.fromEntries(await Promise.all(['ca.crt', 'tls.crt', 'tls.key'].map(async (name) => [name, await readFile(join(dir, name))] as const)));
    await rm(dir, { recursive: true, force: true });
    client = new CloudProvider(connection.address, grpc.credentials.createSsl(files['ca.crt'], files['tls.key'], files['tls.crt'])) as unknown as CloudProviderClient;
  }, 180_000);

  it('refuses a call without a client certificate, or with one the service did not issue', async () => {
    const anonymous = new CloudProvider(connection.address, grpc.credentials.createSsl(Buffer.from(connection.caCertificate))) as unknown as CloudProviderClient;
    await expect(call(anonymous, 'NodeGroups')).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE });
    anonymous.close();
    const stranger = await world.sim.issueClientCertificate('cluster-autoscaler:' + world.clusterId);
    const foreign = new CloudProvider(
      connection.address,
      grpc.credentials.createSsl(Buffer.from(connection.caCertificate), Buffer.from(stranger.keyPem), Buffer.from(stranger.certPem)),
    ) as unknown as CloudProviderClient;
    await expect(call(foreign, 'NodeGroups')).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE });
    foreign.close();
  });

  it('drives Refresh, NodeGroups, TemplateNodeInfo, GetOptions, IncreaseSize(2) to two Ready Nodes, NodeGroupForNode, and DeleteNodes back to the pool', async () => {
    await call(client, 'Refresh');
    const groups = await call<{ nodeGroups: Array<{ id: string; minSize: number; maxSize: number; debug: string }> }>(client, 'NodeGroups');
    expect(groups.nodeGroups.map(({ id, minSize, maxSize }) => ({ id, minSize, maxSize }))).toEqual([
      { id: GROUP, minSize: 0, maxSize: 3 },
      { id: EMPTY_GROUP, minSize: 0, maxSize: 2 },
    ]);

    // The template, decoded as a v1.Node with the field numbers of k8s.io/api.
    const template = await call<{ nodeBytes: Buffer }>(client, 'NodeGroupTemplateNodeInfo', { id: GROUP });
    const root = new protobuf.Root();
    root.loadSync(`${PROTO_DIR}k8s.io/api/core/v1/node.proto`, { keepCase: true });
    const V1Node = root.lookupType('k8s.io.api.core.v1.Node');
    const node = V1Node.toObject(V1Node.decode(template.nodeBytes), { defaults: false }) as {
      metadata: { name: string; labels: Record<string, string> };
      spec: { taints: Array<{ key: string; value: string; effect: string }> };
      status: { allocatable: Record<string, { string: string }>; capacity: Record<string, { string: string }>; conditions: Array<{ type: string; status: string }>; nodeInfo: { architecture: string } };
    };
    expect(node.metadata.labels).toMatchObject({ pool: 'a', 'kubernetes.io/arch': 'amd64', 'kubernetes.io/os': 'linux' });
    expect(node.spec.taints).toEqual([{ key: 'dedicated', value: 'batch', effect: 'NoSchedule' }]);
    // Its CPUs and memory: the smallest of the spares as their hosts reported them (the lab hosts see this machine's), not the profile's 2 CPUs and 4 GiB.
    const spares = (await world.gql<{ nodes: Array<{ status: string; facts: { cpus: number; memoryBytes: number } }> }>('query($c: ID!) { nodes(clusterId: $c) { status facts { cpus memoryBytes } } }', { c: world.clusterId })).data?.nodes.filter((entry) => entry.status === 'READY_TO_INSTALL') ?? [];
    expect(spares).toHaveLength(3);
    expect(node.status.allocatable).toEqual({
      cpu: { string: String(Math.min(...spares.map((spare) => spare.facts.cpus))) },
      memory: { string: String(Math.min(...spares.map((spare) => spare.facts.memoryBytes))) },
      pods: { string: '110' },
      'ephemeral-storage': { string: String(20 * GIB) },
    });
    expect(node.status.conditions).toEqual([expect.objectContaining({ type: 'Ready', status: 'True' })]);

    // GetOptions as cluster-autoscaler 1.36 sends it (its flags as defaults): its own values come back, but
    // for one-by-one scaling and a provision time no shorter than an install from a spare takes.
    const flags = {
      scaleDownUtilizationThreshold: 0.6, scaleDownGpuUtilizationThreshold: 0.3, zeroOrMaxNodeScaling: true, ignoreDaemonSetsUtilization: true,
      scaleDownUnneededDuration: { seconds: '900', nanos: 0 }, scaleDownUnreadyDuration: { seconds: '1500', nanos: 0 }, MaxNodeProvisionDuration: { seconds: '900', nanos: 0 },
    };
    expect(await call(client, 'NodeGroupGetOptions', { id: GROUP, defaults: flags })).toEqual({
      nodeGroupAutoscalingOptions: { ...flags, zeroOrMaxNodeScaling: false, MaxNodeProvisionDuration: { seconds: '1800', nanos: 0 } },
    });
    expect(await call(client, 'NodeGroupGetOptions', { id: GROUP })).toEqual({
      nodeGroupAutoscalingOptions: {
        scaleDownUtilizationThreshold: 0.5, scaleDownGpuUtilizationThreshold: 0.5, zeroOrMaxNodeScaling: false, ignoreDaemonSetsUtilization: false,
        scaleDownUnneededDuration: { seconds: '600', nanos: 0 }, scaleDownUnreadyDuration: { seconds: '1200', nanos: 0 }, MaxNodeProvisionDuration: { seconds: '1800', nanos: 0 },
      },
    });
    const period = { startTimestamp: { seconds: '1796083200', nanos: 0 }, endTimestamp: { seconds: '1796086800', nanos: 0 } };
    await expect(call(client, 'PricingNodePrice', { node: { providerID: 'x' }, ...period })).rejects.toMatchObject({ code: grpc.status.UNIMPLEMENTED });
    await expect(call(client, 'PricingPodPrice', { pod_bytes: Buffer.from([0x0a, 0x00]), ...period })).rejects.toMatchObject({ code: grpc.status.UNIMPLEMENTED });
    expect(await call(client, 'GPULabel')).toEqual({ label: 'nvidia.com/gpu' });
    expect(await call(client, 'GetAvailableGPUTypes')).toEqual({ gpuTypes: {} });

    // Scale-up of 2: returns at once, two instances creating.
    const started = Date.now();
    await call(client, 'NodeGroupIncreaseSize', { id: GROUP, delta: 2 });
    const answeredMs = Date.now() - started;
    expect(await call(client, 'NodeGroupTargetSize', { id: GROUP })).toEqual({ targetSize: 2 });
    const creating = await call<{ instances: Instance[] }>(client, 'NodeGroupNodes', { id: GROUP });
    expect(creating.instances.map((instance) => instance.status.instanceState)).toEqual(['instanceCreating', 'instanceCreating']);
    expect(creating.instances.every((instance) => /^ccos:\/\/lab\/[0-9a-f-]{36}$/.test(instance.id) && instance.status.errorInfo.errorCode === '')).toBe(true);

    const running = await until('2 running instances', async () => {
      await call(client, 'Refresh');
      const answer = await call<{ instances: Instance[] }>(client, 'NodeGroupNodes', { id: GROUP });
      return answer.instances.length === 2 && answer.instances.every((instance) => instance.status.instanceState === 'instanceRunning') ? answer.instances : null;
    }, 600_000);
    const readyMs = Date.now() - started;
    console.log(`scale-up of 2: IncreaseSize answered in ${answeredMs} ms, both Nodes Ready after ${(readyMs / 1000).toFixed(1)} s`);

    const providerIds = running.map((instance) => instance.id).sort();
    const registered = simNodes().filter((candidate) => candidate.spec?.providerID);
    expect(registered.map((candidate) => candidate.spec?.providerID).sort()).toEqual(providerIds);
    for (const candidate of registered) {
      expect(candidate.metadata.labels).toMatchObject({ pool: 'a' });
      expect(candidate.spec?.taints).toEqual(expect.arrayContaining([expect.objectContaining({ key: 'dedicated', value: 'batch', effect: 'NoSchedule' })]));
      expect(candidate.status?.conditions?.find((condition) => condition.type === 'Ready')?.status).toBe('True');
      const mapped = await call<{ nodeGroup: { id: string } }>(client, 'NodeGroupForNode', { node: { providerID: candidate.spec?.providerID, name: candidate.metadata.name } });
      expect(mapped.nodeGroup.id).toBe(GROUP);
    }
    // A Node no group manages (a control plane, a discovered worker) maps to no group.
    expect((await call<{ nodeGroup: { id: string } }>(client, 'NodeGroupForNode', { node: { providerID: '', name: 'control-plane-1' } })).nodeGroup.id).toBe('');

    // Past the maximum, and a node outside the group, are refused and change nothing.
    await expect(call(client, 'NodeGroupIncreaseSize', { id: GROUP, delta: 2 })).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT, details: expect.stringMatching(/above the maximum 3/) });
    await expect(call(client, 'NodeGroupDeleteNodes', { id: GROUP, nodes: [{ providerID: 'ccos://lab/00000000-0000-4000-8000-000000000000', name: 'stranger' }] })).rejects.toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
      details: expect.stringMatching(/does not belong to node group pool-a/),
    });
    await expect(call(client, 'NodeGroupTargetSize', { id: 'no-such-group' })).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
    expect(await call(client, 'NodeGroupTargetSize', { id: GROUP })).toEqual({ targetSize: 2 });

    // The autoscaler cordons (unschedulable + its taint) and evicts the pods, then asks for the deletion.
    const names = registered.map((candidate) => candidate.metadata.name);
    for (const name of names) {
      const pod = await kube('POST', '/api/v1/namespaces/default/pods', {
        apiVersion: 'v1', kind: 'Pod', metadata: { name: `work-${name}`, namespace: 'default' },
        spec: { nodeName: name, containers: [{ name: 'c', image: 'busybox' }], tolerations: [{ key: 'dedicated', operator: 'Exists' }] },
      });
      expect(pod.status).toBe(201);
      const current = simNodes().find((candidate) => candidate.metadata.name === name);
      const cordoned = await kube('PATCH', `/api/v1/nodes/${name}`, {
        spec: { unschedulable: true, taints: [...(current?.spec?.taints ?? []), { key: 'ToBeDeletedByClusterAutoscaler', value: String(Math.floor(Date.now() / 1000)), effect: 'NoSchedule' }] },
      }, 'application/merge-patch+json');
      expect(cordoned.status).toBe(200);
      const evicted = await kube('POST', `/api/v1/namespaces/default/pods/work-${name}/eviction`, {
        apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: `work-${name}`, namespace: 'default' }, deleteOptions: { gracePeriodSeconds: 0 },
      });
      expect(evicted.status).toBe(201);
    }
    // The autoscaler asks for the deletion once its drain is over: no pod of the work left.
    const pods = () => (world.sim.store.list(world.sim.resource('pods'), { namespace: 'default' }) as unknown as Array<{ metadata: { name: string } }>).filter((pod) => pod.metadata.name.startsWith('work-'));
    await until('evicted pods gone', async () => (pods().length === 0 ? true : null), 30_000);
    // A leftover planted on one host: it must come back reinstall-required, not as a spare.
    const before = await group(groupId);
    const [planted, clean] = before.hosts.filter((host) => host.state === 'RUNNING');
    const plantedHost = labHost(planted.hostname);
    await world.lab.exec(plantedHost.id, ['sh', '-c', 'mkdir -p /etc/kubernetes/manifests && echo "kind: Pod" > /etc/kubernetes/manifests/leftover.yaml']);

    await call(client, 'NodeGroupDeleteNodes', { id: GROUP, nodes: names.map((name) => ({ name, providerID: registered.find((candidate) => candidate.metadata.name === name)?.spec?.providerID })) });
    expect(await call(client, 'NodeGroupTargetSize', { id: GROUP })).toEqual({ targetSize: 0 });
    const settled = await until('hosts back in the pool or out', async () => {
      const view = await group(groupId);
      const states = Object.fromEntries(view.hosts.map((host) => [host.hostname, host.state]));
      return states[planted.hostname] === 'REINSTALL_REQUIRED' && states[clean.hostname] === 'SPARE' ? view : null;
    }, 300_000, () => group(groupId));
    expect(simNodes().filter((candidate) => names.includes(candidate.metadata.name))).toEqual([]);
    for (const hostname of [planted.hostname, clean.hostname]) {
      const host = labHost(hostname);
      const active = await world.lab.exec(host.id, ['systemctl', 'is-active', 'kubelet']).then((result) => result.stdout.trim(), (error: { result?: { stdout: string } }) => error.result?.stdout.trim() ?? '');
      expect(active).not.toBe('active');
    }
    expect(settled.spares).toBe(2);
    expect(settled.hosts.find((host) => host.hostname === planted.hostname)?.reason).toMatch(/leftover\.yaml/);
    const kinds = settled.activity.map((entry) => `${entry.kind} ${entry.hostname ?? ''}`.trim());
    expect(kinds).toEqual(expect.arrayContaining([`RETURN_TO_POOL ${clean.hostname}`, `REINSTALL_REQUIRED ${planted.hostname}`, `DELETE ${clean.hostname}`, `INSTALLED ${clean.hostname}`]));
    expect((await call<{ instances: Instance[] }>(client, 'NodeGroupNodes', { id: GROUP })).instances).toEqual([]);

    const audit = await world.gql<{ auditLog: { entries: Array<{ action: string }> } }>('query { auditLog(first: 200) { entries { action } } }');
    const actions = new Set(audit.data?.auditLog.entries.map((entry) => entry.action));
    for (const action of ['autoscaling.reserve', 'autoscaling.install', 'autoscaling.installed', 'autoscaling.delete', 'autoscaling.return_to_pool', 'autoscaling.reinstall_required']) {
      expect(actions.has(action)).toBe(true);
    }
    const metrics = await fetch(`${world.api.url}/metrics`).then((res) => res.text());
    expect(metrics).toMatch(/ccos_autoscaling_decisions_total\{kind="RETURN_TO_POOL",node_group="pool-a"\} 1/);
  }, 900_000);

  it('reports the instances an empty pool cannot fill as out-of-resources, and drops them on request', async () => {
    await call(client, 'NodeGroupIncreaseSize', { id: EMPTY_GROUP, delta: 1 });
    const answer = await call<{ instances: Instance[] }>(client, 'NodeGroupNodes', { id: EMPTY_GROUP });
    expect(answer.instances).toHaveLength(1);
    expect(answer.instances[0]?.status).toEqual({
      instanceState: 'instanceCreating',
      errorInfo: { errorCode: 'NO_SPARE_HOSTS', errorMessage: 'node group pool-empty has no spare host left in its pool', instanceErrorClass: 1 },
    });
    await expect(call(client, 'NodeGroupIncreaseSize', { id: EMPTY_GROUP, delta: 2 })).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
    // The autoscaler deletes instances that failed to come up: a placeholder only lowers the target.
    await call(client, 'NodeGroupDeleteNodes', { id: EMPTY_GROUP, nodes: [{ providerID: answer.instances[0]?.id }] });
    expect(await call(client, 'NodeGroupTargetSize', { id: EMPTY_GROUP })).toEqual({ targetSize: 0 });
    expect((await call<{ instances: Instance[] }>(client, 'NodeGroupNodes', { id: EMPTY_GROUP })).instances).toEqual([]);
    const view = await group(emptyGroupId);
    expect(view.activity.map((entry) => entry.kind)).toEqual(expect.arrayContaining(['OUT_OF_RESOURCES', 'DECREASE_TARGET']));
  }, 60_000);
});

import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { AgentTokens } from '@ccos/api/data-access-db';
import { type BootstrapIdentity, type KubeClient, ClusterAddressGuard, createKubeClient, mintBootstrapIdentity } from '@ccos/api/data-access-kube';
import { CSR_TEST_SEED } from '@ccos/api/feature-csrs/testing';
import { KUBELET_CLIENT_SIGNER, KUBELET_SERVING_SIGNER, OPENSHIFT_NODE_BOOTSTRAPPER } from '@ccos/shared/domain';
import { formatServerText } from '@ccos/shared/messages';
// The cluster of these tests is the in-process Kubernetes API simulator (a test-only tool).
import { type KubeSim, generateCertificateRequest, startKubeSim } from '@ccos/tools/kube-sim';
import { type ApiHarness, startApiHarness } from '../testing/api-test-harness';

/** An error's message in Chinese, from its messageCode and messageParams. */
function zh(error: { message: string; extensions?: Record<string, unknown> } | undefined): string {
  return formatServerText('zh-CN', error?.extensions?.['messageCode'] as string, error?.extensions?.['messageParams'], null);
}

/** A field error's problem in Chinese, from its problemCode and problemParams (the words a client puts beside the field). */
function zhProblem(error: { message: string; extensions?: Record<string, unknown> } | undefined): string {
  return formatServerText('zh-CN', error?.extensions?.['problemCode'] as string, error?.extensions?.['problemParams'], null);
}

/** kube-sim listens on 127.0.0.1, which clients refuse unless allowed. */
const LOOPBACK = ClusterAddressGuard.allowing('loopback');

/** The shared credential every worker's Ignition carries (the OpenShift node-bootstrapper). */
const BOOTSTRAPPER_TOKEN = 'bootstrapper-token-for-api-tests';
/** Where the service mints install runs' identities (BOOTSTRAP_NAMESPACE's default). */
const BOOTSTRAP_NAMESPACE = 'ccos-scaler-bootstrap';

const CSR_FIELDS = `
  name signerName status issued decidedBy statusReason statusReasonCode statusReasonParams usages createdAt ageSeconds parseError
  requester { username groups }
  subject { text commonNames organizations }
  sans { dnsNames ipAddresses emailAddresses uris otherNames }
  key { algorithm bits curve signatureAlgorithm signatureValid }
  node { id hostname }
  decisions { decision actor reason reasonCode reasonParams forced forceReason checks { name passed overridable } }
  verdict { csrName decision kind node reason checks { name passed detail overridable } }`;

interface CsrView {
  name: string;
  status: string;
  issued: boolean;
  decidedBy: string | null;
  statusReason: string | null;
  statusReasonCode: string | null;
  statusReasonParams: Record<string, unknown> | null;
  requester: { username: string; groups: string[] };
  subject: { text: string; commonNames: string[]; organizations: string[] } | null;
  sans: { dnsNames: string[]; ipAddresses: string[] } | null;
  key: { algorithm: string; curve: string | null; signatureValid: boolean } | null;
  node: { id: string; hostname: string } | null;
  decisions: Array<{ decision: string; actor: string; reason: string; reasonCode: string | null; reasonParams: Record<string, unknown> | null; forced: boolean; forceReason: string | null }>;
  verdict: { decision: string; kind: string | null; node: string | null; reason: string; checks: Array<{ name: string; passed: boolean; detail: string; overridable: boolean }> };
}

interface CsrRequest {
  commonName: string;
  signerName?: string;
  dnsNames?: string[];
  ipAddresses?: string[];
  organizations?: string[];
  /** A node name: the CSR is made with that node's client certificate instead of the bootstrap token. */
  asNode?: string;
  /** Made with the shared bootstrap credential instead of the run identity of the node the CN names. */
  shared?: boolean;
  usages?: string[];
}

describe('CSR review and auto-approval over GraphQL, against kube-sim', () => {
  let harness: ApiHarness;
  let sim: KubeSim;
  let admin: string;
  let operator: string;
  let viewer: string;
  let clusterId: string;
  let kube: KubeClient;
  const requesters = new Map<string, KubeClient>();
  /** How far kube-sim's clock runs ahead of the machine's: moved instead of waiting for the next second (well within the policy's clock-skew tolerance). */
  let simAheadMs = 0;
  /** The identity the service would have minted for each node's install run (minted here the same way). */
  const identities = new Map<string, BootstrapIdentity>();

  const createCsr = async (request: CsrRequest): Promise<string> => {
    const named = request.commonName.replace(/^system:node:/, '');
    const identity = request.asNode || request.shared ? undefined : identities.get(named);
    const key = request.asNode ?? (identity ? `run:${named}` : 'bootstrapper');
    let client = requesters.get(key);
    if (!client) {
      const kubeconfig = request.asNode
        ? sim.kubeconfigFor(await sim.issueClientCertificate(`system:node:${request.asNode}`, ['system:nodes']))
        : sim.kubeconfigFor({ token: identity?.token ?? BOOTSTRAPPER_TOKEN });
      client = createKubeClient({ addresses: LOOPBACK, apiServerUrl: sim.url, credentials: { kind: 'KUBECONFIG', kubeconfig } });
      requesters.set(key, client);
    }
    const signerName = request.signerName ?? KUBELET_CLIENT_SIGNER;
    const { csrPem } = await generateCertificateRequest({
      commonName: request.commonName,
      organizations: request.organizations ?? ['system:nodes'],
      dnsNames: request.dnsNames,
      ipAddresses: request.ipAddresses,
    });
    const requester = client;
    const created = await requester.call('create csr', (options) =>
      requester.certificates.createCertificateSigningRequest(
        {
          body: {
            metadata: { generateName: 'csr-' },
            spec: {
              request: Buffer.from(csrPem).toString('base64'),
              signerName,
              usages: request.usages ?? ['digital signature', signerName === KUBELET_CLIENT_SIGNER ? 'client auth' : 'server auth'],
            },
          },
        },
        options,
      ),
    );
    return created.metadata?.name ?? '';
  };

  /** A node of the inventory whose install run is at START_KUBELET (started `agoMs` ago), with its own bootstrap identity. */
  const addInstallingNode = async (hostname: string, ip: string, agoMs = 1000): Promise<string> => {
    const db = harness.api.dataSource;
    const nodeId = randomUUID();
    const runId = randomUUID();
    await db.query(`INSERT INTO nodes (id, cluster_id, hostname, ip, status) VALUES ($1, $2, $3, $4, 'INSTALLING')`, [nodeId, clusterId, hostname, ip]);
    const identity = await mintBootstrapIdentity(kube, { namespace: BOOTSTRAP_NAMESPACE, name: `run-${runId}`, expiresAt: new Date(Date.now() + 3600_000) });
    identities.set(hostname, identity);
    // The run started a minute before its kubelet.
    await db.query(
      `INSERT INTO install_runs (id, node_id, status, requested_by, started_at, deadline_at, bootstrap_identity, bootstrap_identity_uid, agent_launched_at) VALUES ($1, $2, 'RUNNING', 'operator', $5, now() + interval '1 hour', $3, $4, now())`,
      [runId, nodeId, identity.username, identity.uid, new Date(Date.now() - agoMs - 60_000)],
    );
    const at = new Date(Date.now() - agoMs);
    await db.query(`INSERT INTO step_events (run_id, seq, step, status, occurred_at, received_at) VALUES ($1, 1, 'START_KUBELET', 'STARTED', $2, $2)`, [runId, at]);
    return nodeId;
  };

  const conditions = async (name: string): Promise<string[]> =>
    ((await kube.certificates.readCertificateSigningRequest({ name })).status?.conditions ?? []).map((condition) => condition.type);

  const listCsrs = async (token: string, pendingOnly = false): Promise<CsrView[]> => {
    const result = await harness.gql<{ csrs: CsrView[] }>(`query($c: ID!, $p: Boolean) { csrs(clusterId: $c, pendingOnly: $p) { ${CSR_FIELDS} } }`, { c: clusterId, p: pendingOnly }, token);
    expect(result.errors).toBeUndefined();
    return result.data?.csrs ?? [];
  };

  const csrNamed = async (name: string): Promise<CsrView> => {
    const found = (await listCsrs(viewer)).find((csr) => csr.name === name);
    if (!found) {
      throw new Error(`${name} not listed`);
    }
    return found;
  };

  /** Waits until the API's watch cache has the CSR. */
  const listed = async (name: string): Promise<void> => {
    for (let attempt = 0; attempt < 100; attempt += 1) {
      if ((await listCsrs(viewer)).some((csr) => csr.name === name)) {
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`${name} never listed`);
  };

  beforeAll(async () => {
    sim = await startKubeSim({
      clock: { now: () => Date.now() + simAheadMs },
      seed: CSR_TEST_SEED,
      staticTokens: [{ token: BOOTSTRAPPER_TOKEN, user: OPENSHIFT_NODE_BOOTSTRAPPER, uid: 'nb', groups: ['system:serviceaccounts', 'system:serviceaccounts:openshift-machine-config-operator'] }],
      nodeMonitorGracePeriodSeconds: 0,
    });
    kube = createKubeClient({ addresses: LOOPBACK, apiServerUrl: sim.url, credentials: { kind: 'KUBECONFIG', kubeconfig: sim.kubeconfig } });
    // The window test reports as an agent over plain HTTP; the channel is not what it checks.
    harness = await startApiHarness({ AGENT_PLAIN_HTTP: 'allow' });
    admin = await harness.tokenFor('ADMIN');
    operator = await harness.tokenFor('OPERATOR');
    viewer = await harness.tokenFor('VIEWER');
    clusterId = await harness.registerSimCluster(sim);
  });
  afterAll(async () => {
    for (const client of requesters.values()) {
      client.close();
    }
    kube?.close();
    await harness?.stop();
    await sim?.stop();
  });

  describe('who may do what', () => {
    const operations: Array<[string, string, Record<string, unknown>, 'VIEWER' | 'OPERATOR' | 'ADMIN']> = [
      ['csrs', 'query($c: ID!) { csrs(clusterId: $c) { name } }', {}, 'VIEWER'],
      ['csrPolicyPreview', 'query($c: ID!) { csrPolicyPreview(clusterId: $c) { csrName } }', {}, 'VIEWER'],
      ['approveCsr', 'mutation($c: ID!) { approveCsr(clusterId: $c, name: "csr-nope") { name } }', {}, 'OPERATOR'],
      ['denyCsr', 'mutation($c: ID!) { denyCsr(clusterId: $c, name: "csr-nope", reason: "no") { name } }', {}, 'OPERATOR'],
      ['setCsrAutoApprove', 'mutation($c: ID!) { setCsrAutoApprove(clusterId: $c, enabled: false) { id } }', {}, 'ADMIN'],
    ];
    const ROLES = ['VIEWER', 'OPERATOR', 'ADMIN'] as const;

    it.each(operations)('%s needs %s', async (_name, query, variables, needed) => {
      const anonymous = await harness.gql(query, { c: clusterId, ...variables });
      expect(anonymous.errors?.[0]?.extensions?.['code']).toBe('UNAUTHENTICATED');
      for (const role of ROLES) {
        const result = await harness.gql(query, { c: clusterId, ...variables }, role === 'ADMIN' ? admin : role === 'OPERATOR' ? operator : viewer);
        const code = result.errors?.[0]?.extensions?.['code'];
        if (ROLES.indexOf(role) < ROLES.indexOf(needed)) {
          expect(code, role).toBe('FORBIDDEN');
          expect(result.errors?.[0]?.message).toBe(`this operation needs the ${needed} role; you are ${role}`);
        } else {
          // Allowed through: either an answer or an error about the CSR itself.
          expect(code === undefined || code === 'NOT_FOUND', `${role}: ${JSON.stringify(result.errors)}`).toBe(true);
        }
      }
    });

    it('writes refused and failed CSR decisions to the audit log', async () => {
      const rows: Array<{ actor: string; action: string; result: string }> = await harness.api.dataSource.query(
        `SELECT actor, action, result FROM audit_log WHERE action IN ('approveCsr', 'denyCsr') ORDER BY id`,
      );
      expect(rows).toEqual(
        expect.arrayContaining([
          { actor: 'anonymous', action: 'approveCsr', result: 'DENIED' },
          { actor: 'viewer', action: 'approveCsr', result: 'DENIED' },
          { actor: 'viewer', action: 'denyCsr', result: 'DENIED' },
          { actor: 'operator', action: 'approveCsr', result: 'FAILURE' },
        ]),
      );
    });

    it('answers NOT_FOUND for an unknown cluster', async () => {
      const result = await harness.gql('query($c: ID!) { csrs(clusterId: $c) { name } }', { c: randomUUID() }, viewer);
      expect(result.errors?.[0]?.extensions?.['code']).toBe('NOT_FOUND');
    });
  });

  describe('review with auto-approve off', () => {
    let legit: string;
    let forged: string;
    let workerId: string;

    beforeAll(async () => {
      workerId = await addInstallingNode('worker-1', '198.18.0.11');
      legit = await createCsr({ commonName: 'system:node:worker-1' });
      // creationTimestamp has a resolution of one second: make the forged CSR the newer one.
      simAheadMs += 1000;
      // A client CSR asking for an extra organisation: system:masters would make it cluster-admin.
      forged = await createCsr({ commonName: 'system:node:worker-1', organizations: ['system:nodes', 'system:masters'] });
      await listed(forged);
    });

    it('lists CSRs with what they claim, who asked, the node they belong to and every policy check', async () => {
      const csrs = await listCsrs(viewer, true);
      const view = csrs.find((csr) => csr.name === legit);
      expect(view).toMatchObject({
        status: 'PENDING',
        issued: false,
        decidedBy: null,
        requester: { username: identities.get('worker-1')?.username, groups: ['system:serviceaccounts', `system:serviceaccounts:${BOOTSTRAP_NAMESPACE}`, 'system:authenticated'] },
        subject: { text: 'O=system:nodes, CN=system:node:worker-1', commonNames: ['system:node:worker-1'], organizations: ['system:nodes'] },
        sans: { dnsNames: [], ipAddresses: [] },
        key: { algorithm: 'EC', curve: 'P-256', signatureValid: true },
        node: { id: workerId, hostname: 'worker-1' },
      });
      // Two pending client CSRs for worker-1: the newer (forged) one is not approvable, so the older waits for an operator.
      expect(view?.verdict.decision).toBe('LEAVE_PENDING');
      expect(view?.verdict.reason).toContain(`another pending CSR for worker-1 with this signer exists (${forged}, newer, not approvable: O is [system:nodes, system:masters]`);
      expect(view?.verdict.checks).toHaveLength(16);
      const forgedView = csrs.find((csr) => csr.name === forged);
      expect(forgedView?.verdict.checks.filter((check) => !check.passed).map((check) => check.name)).toEqual(['subject-organization']);
    });

    it('previews what the policy would do without changing anything', async () => {
      const result = await harness.gql<{ csrPolicyPreview: Array<{ csrName: string; decision: string; reason: string }> }>(
        'query($c: ID!) { csrPolicyPreview(clusterId: $c) { csrName decision reason } }',
        { c: clusterId },
        viewer,
      );
      expect(result.data?.csrPolicyPreview).toEqual([
        expect.objectContaining({ csrName: legit, decision: 'LEAVE_PENDING' }),
        { csrName: forged, decision: 'LEAVE_PENDING', reason: 'O is [system:nodes, system:masters]; exactly [system:nodes] is required' },
      ]);
      expect(await conditions(legit)).toEqual([]);
      expect(await harness.api.dataSource.query('SELECT count(*)::int AS n FROM csr_decisions')).toEqual([{ n: 0 }]);
    });

    it('refuses to approve what the policy would not, names what force cannot override, and records the override', async () => {
      const refused = await harness.gql('mutation($c: ID!, $n: String!) { approveCsr(clusterId: $c, name: $n) { name } }', { c: clusterId, n: forged }, operator);
      expect(refused.errors?.[0]).toMatchObject({
        message: `the CSR policy would not approve ${forged}: O is [system:nodes, system:masters]; exactly [system:nodes] is required; force cannot override subject-organization`,
        extensions: { code: 'FAILED_PRECONDITION', failedChecks: ['subject-organization'], blockingChecks: ['subject-organization'] },
      });
      expect(zh(refused.errors?.[0])).toBe(`CSR 策略不会批准 ${forged}：O 为 [system:nodes, system:masters]；必须恰好为 [system:nodes]；强制批准也不能越过 subject-organization`);
      expect(await conditions(forged)).toEqual([]);

      const denied = await harness.gql<{ denyCsr: CsrView }>(
        `mutation($c: ID!, $n: String!, $r: String!) { denyCsr(clusterId: $c, name: $n, reason: $r) { ${CSR_FIELDS} } }`,
        { c: clusterId, n: forged, r: 'asks for system:masters' },
        operator,
      );
      expect(denied.errors).toBeUndefined();
      expect(denied.data?.denyCsr).toMatchObject({ status: 'DENIED', decidedBy: 'operator', statusReason: 'asks for system:masters' });
      const condition = (await kube.certificates.readCertificateSigningRequest({ name: forged })).status?.conditions?.[0];
      expect(condition).toMatchObject({ type: 'Denied', reason: 'CcosScalerDeny', message: 'Denied by operator through ccos-scaler: asks for system:masters' });

      // With the forged duplicate gone, the legitimate CSR is approvable and an operator approves it without force.
      const approved = await harness.gql<{ approveCsr: CsrView }>(
        `mutation($c: ID!, $n: String!) { approveCsr(clusterId: $c, name: $n) { ${CSR_FIELDS} } }`,
        { c: clusterId, n: legit },
        operator,
      );
      expect(approved.errors).toBeUndefined();
      expect(approved.data?.approveCsr).toMatchObject({ status: 'APPROVED', decidedBy: 'operator', statusReason: 'approved by operator; all 16 checks passed', statusReasonCode: 'csr.decision.approved' });
      const operatorApproved = approved.data?.approveCsr;
      expect(formatServerText('zh-CN', operatorApproved?.statusReasonCode, operatorApproved?.statusReasonParams, null)).toMatch(/^由 operator 批准；/);
      expect(operatorApproved?.decisions[0]?.reasonCode).toBe('csr.decision.approved');
      expect(approved.data?.approveCsr.decisions).toEqual([expect.objectContaining({ decision: 'APPROVED', actor: 'operator', forced: false })]);

      // A host this service did not install (not in the inventory), joining with the shared credential: only an ADMIN's force, with a reason, recorded so.
      const stranger = await createCsr({ commonName: 'system:node:stranger' });
      await listed(stranger);
      const reason = 'stranger was installed by hand before this service managed the cluster (OPS-1234)';
      const forcedResult = await harness.gql<{ approveCsr: CsrView }>(
        `mutation($c: ID!, $n: String!, $r: String) { approveCsr(clusterId: $c, name: $n, force: true, reason: $r) { ${CSR_FIELDS} } }`,
        { c: clusterId, n: stranger, r: reason },
        admin,
      );
      expect(forcedResult.errors).toBeUndefined();
      expect(forcedResult.data?.approveCsr.decisions[0]).toMatchObject({
        decision: 'APPROVED',
        actor: 'admin',
        forced: true,
        forceReason: reason,
        reason: `forced by admin: ${reason}; the policy said: requested by the shared bootstrap identity ${OPENSHIFT_NODE_BOOTSTRAPPER}; only the identity of the node's own install run is trusted, and the node is not in the inventory`,
      });
      expect((await kube.certificates.readCertificateSigningRequest({ name: stranger })).status?.conditions?.[0]).toMatchObject({
        type: 'Approved',
        reason: 'CcosScalerForcedApprove',
        message: `Approved by admin through ccos-scaler, overriding the CSR policy: ${reason}`,
      });
      const rows = await harness.api.dataSource.query(`SELECT csr_name, decision, actor, forced, force_reason, node_id FROM csr_decisions ORDER BY id`);
      expect(rows).toEqual([
        { csr_name: forged, decision: 'DENIED', actor: 'operator', forced: false, force_reason: null, node_id: workerId },
        { csr_name: legit, decision: 'APPROVED', actor: 'operator', forced: false, force_reason: null, node_id: workerId },
        { csr_name: stranger, decision: 'APPROVED', actor: 'admin', forced: true, force_reason: reason, node_id: null },
      ]);
      const audit = await harness.api.dataSource.query(
        `SELECT actor, action, result, target_id, detail->'args'->>'reason' AS reason FROM audit_log WHERE action IN ('approveCsr', 'denyCsr') AND result = 'SUCCESS' ORDER BY id`,
      );
      expect(audit).toEqual([
        { actor: 'operator', action: 'denyCsr', result: 'SUCCESS', target_id: clusterId, reason: 'asks for system:masters' },
        { actor: 'operator', action: 'approveCsr', result: 'SUCCESS', target_id: clusterId, reason: null },
        { actor: 'admin', action: 'approveCsr', result: 'SUCCESS', target_id: clusterId, reason },
      ]);
    });

    it('refuses contradictory and empty decisions', async () => {
      const approveDenied = await harness.gql('mutation($c: ID!, $n: String!) { approveCsr(clusterId: $c, name: $n) { name } }', { c: clusterId, n: forged }, operator);
      expect(approveDenied.errors?.[0]).toMatchObject({ message: `${forged} is already denied; only a pending CSR can be approved`, extensions: { code: 'FAILED_PRECONDITION' } });
      expect(zh(approveDenied.errors?.[0])).toBe(`${forged} 已被拒绝；只有待处理的 CSR 才能被批准`);
      const denyApproved = await harness.gql('mutation($c: ID!, $n: String!) { denyCsr(clusterId: $c, name: $n, reason: "late") { name } }', { c: clusterId, n: legit }, operator);
      expect(denyApproved.errors?.[0]?.extensions?.['code']).toBe('FAILED_PRECONDITION');
      const empty = await harness.gql('mutation($c: ID!, $n: String!) { denyCsr(clusterId: $c, name: $n, reason: "  ") { name } }', { c: clusterId, n: legit }, operator);
      expect(empty.errors?.[0]).toMatchObject({ message: 'reason must not be empty: say why the CSR is denied', extensions: { code: 'BAD_USER_INPUT' } });
      expect(zhProblem(empty.errors?.[0])).toBe('不能为空：请说明拒绝此 CSR 的原因');
      const missing = await harness.gql('mutation($c: ID!) { approveCsr(clusterId: $c, name: "csr-missing") { name } }', { c: clusterId }, operator);
      expect(missing.errors?.[0]).toMatchObject({ message: 'certificate signing request csr-missing does not exist', extensions: { code: 'NOT_FOUND' } });
    });
  });

  describe('forced approvals: an ADMIN, a written reason, and never past the certificate\'s own form', () => {
    let outside: string;
    let masters: string;
    let foreign: string;
    let impostor: string;
    const FORCE = `mutation($c: ID!, $n: String!, $r: String) { approveCsr(clusterId: $c, name: $n, force: true, reason: $r) { ${CSR_FIELDS} } }`;

    beforeAll(async () => {
      await addInstallingNode('worker-8', '198.18.0.18');
      // Its kubelet started two hours ago: the 60-minute approval window has closed.
      await addInstallingNode('worker-9', '198.18.0.19', 2 * 3600_000);
      outside = await createCsr({ commonName: 'system:node:worker-9' });
      masters = await createCsr({ commonName: 'system:node:worker-8', organizations: ['system:nodes', 'system:masters'] });
      foreign = await createCsr({ commonName: 'system:node:worker-8', signerName: 'kubernetes.io/kube-apiserver-client' });
      impostor = await createCsr({ commonName: 'system:node:worker-8', shared: true });
      await listed(impostor);
    });

    it('refuses force: true from an OPERATOR, whatever the CSR, and audits the refusal', async () => {
      for (const name of [outside, masters]) {
        const result = await harness.gql(FORCE, { c: clusterId, n: name, r: 'I know what I am doing' }, operator);
        expect(result.errors?.[0]).toMatchObject({ message: 'approving with force needs the ADMIN role; you are OPERATOR', extensions: { code: 'FORBIDDEN', requiredRole: 'ADMIN' } });
        expect(zh(result.errors?.[0])).toBe('强制批准需要 ADMIN 角色；您的角色是 OPERATOR');
        expect(await conditions(name)).toEqual([]);
      }
      const audit = await harness.api.dataSource.query(
        `SELECT actor, result, detail->>'code' AS code FROM audit_log WHERE action = 'approveCsr' AND detail->'args'->>'force' = 'true' AND detail->'args'->>'name' = ANY($1)`,
        [[outside, masters]],
      );
      expect(audit).toEqual([{ actor: 'operator', result: 'DENIED', code: 'FORBIDDEN' }, { actor: 'operator', result: 'DENIED', code: 'FORBIDDEN' }]);
    });

    it.each([
      ['a system:masters subject', () => masters, 'subject-organization', 'O is [system:nodes, system:masters]; exactly [system:nodes] is required'],
      ['a signer that is not a kubelet signer', () => foreign, 'signer', 'signer kubernetes.io/kube-apiserver-client is not a kubelet signer'],
      ['an impostor (the shared bootstrap credential for a node this service installs)', () => impostor, 'requester', `impostor: a client CSR for worker-8 requested by ${OPENSHIFT_NODE_BOOTSTRAPPER}`],
    ])('refuses an ADMIN\'s force for %s, naming the check', async (_what, name, check, detail) => {
      const result = await harness.gql(FORCE, { c: clusterId, n: name(), r: 'approve it anyway' }, admin);
      expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'FAILED_PRECONDITION', blockingChecks: [check] });
      expect(result.errors?.[0]?.message).toMatch(new RegExp(`^force cannot approve ${name()}: ${check} \\(`));
      expect(result.errors?.[0]?.message).toContain(detail);
      expect(zh(result.errors?.[0])).toMatch(new RegExp(`^无法强制批准 ${name()}：${check}（.+）；任何批准都不能越过这项检查$`));
      expect(await conditions(name())).toEqual([]);
      const shown = await csrNamed(name());
      expect(shown.verdict.checks.find((entry) => entry.name === check)).toMatchObject({ passed: false, overridable: false });
      expect(shown.decisions).toEqual([]);
    });

    it('shows an impostor\'s CSR as one the policy denies, naming who filed it', async () => {
      const shown = await csrNamed(impostor);
      expect(shown.verdict).toMatchObject({ decision: 'DENY_IMPOSTOR', node: 'worker-8' });
      expect(shown.verdict.reason).toBe(
        `impostor: a client CSR for worker-8 requested by ${OPENSHIFT_NODE_BOOTSTRAPPER}, not by the bootstrap identity of the install run of worker-8 (${identities.get('worker-8')?.username}) nor by the node itself`,
      );
    });

    it.each([
      ['no reason', undefined, 'reason is required with force: say why the CSR is approved against the policy', '强制批准时必须填写：请说明为何违背策略批准此 CSR'],
      ['a blank reason', '  ', 'reason is required with force: say why the CSR is approved against the policy', '强制批准时必须填写：请说明为何违背策略批准此 CSR'],
      ['a reason of 501 characters', 'x'.repeat(501), 'reason is 501 characters long; at most 500 are allowed', '长度为 501 个字符，最多允许 500 个'],
    ])('refuses an ADMIN\'s force with %s', async (_what, reason, message, chinese) => {
      const result = await harness.gql(FORCE, { c: clusterId, n: outside, r: reason }, admin);
      expect(result.errors?.[0]).toMatchObject({ message, extensions: { code: 'BAD_USER_INPUT', field: 'reason' } });
      expect(zhProblem(result.errors?.[0])).toBe(chinese);
      expect(await conditions(outside)).toEqual([]);
    });

    it('refuses a reason without force', async () => {
      const result = await harness.gql('mutation($c: ID!, $n: String!) { approveCsr(clusterId: $c, name: $n, reason: "because") { name } }', { c: clusterId, n: outside }, admin);
      expect(result.errors?.[0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT', field: 'reason' } });
      expect(zhProblem(result.errors?.[0])).toBe('只用于 force: true（强制批准）；策略允许的批准无需填写理由');
    });

    it('approves, for an ADMIN with a reason, a CSR that is valid but for its closed approval window, keeping the reason in the decision and the audit log', async () => {
      const before = await csrNamed(outside);
      expect(before.verdict.checks.filter((check) => !check.passed)).toEqual([expect.objectContaining({ name: 'approval-window', overridable: true })]);
      const reason = 'kubelet waited on a storage outage; the host is the one we installed (INC-77)';
      const result = await harness.gql<{ approveCsr: CsrView }>(FORCE, { c: clusterId, n: outside, r: `  ${reason}  ` }, admin);
      expect(result.errors).toBeUndefined();
      expect(result.data?.approveCsr).toMatchObject({ status: 'APPROVED', decidedBy: 'admin' });
      expect(result.data?.approveCsr.decisions).toEqual([expect.objectContaining({ decision: 'APPROVED', actor: 'admin', forced: true, forceReason: reason })]);
      expect(result.data?.approveCsr.decisions[0]?.reason).toMatch(new RegExp(`^forced by admin: ${reason.replace(/[()]/g, '\\$&')}; the policy said: the approval window of worker-9 closed at `));
      expect(await conditions(outside)).toEqual(['Approved']);
      const audit = await harness.api.dataSource.query(`SELECT actor, result, detail->'args' AS args FROM audit_log WHERE action = 'approveCsr' AND detail->'args'->>'name' = $1 AND result = 'SUCCESS'`, [outside]);
      expect(audit).toEqual([{ actor: 'admin', result: 'SUCCESS', args: { clusterId, name: outside, force: true, reason: `  ${reason}  ` } }]);
    });
  });

  describe('the approval window opens once per run', () => {
    it('does not move when START_KUBELET STARTED is re-sent or sent again later', async () => {
      const db = harness.api.dataSource;
      const nodeId = randomUUID();
      const runId = randomUUID();
      await db.query(`INSERT INTO nodes (id, cluster_id, hostname, ip, status) VALUES ($1, $2, 'worker-10', '198.18.0.20', 'INSTALLING')`, [nodeId, clusterId]);
      const identity = await mintBootstrapIdentity(kube, { namespace: BOOTSTRAP_NAMESPACE, name: `run-${runId}`, expiresAt: new Date(Date.now() + 3600_000) });
      identities.set('worker-10', identity);
      const { token, hash } = new AgentTokens(db).issue();
      await db.query(
        `INSERT INTO install_runs (id, node_id, status, requested_by, agent_token_hash, agent_token_expires_at, deadline_at, bootstrap_identity, bootstrap_identity_uid, agent_launched_at)
         VALUES ($1, $2, 'RUNNING', 'operator', $3, now() + interval '3 hours', now() + interval '3 hours', $4, $5, now())`,
        [runId, nodeId, hash, identity.username, identity.uid],
      );
      const report = (seq: number) =>
        harness.gql<{ reportStep: { accepted: boolean; duplicate: boolean } }>(
          'mutation($i: ReportStepInput!) { reportStep(input: $i) { accepted duplicate } }',
          { i: { runId, seq, step: 'START_KUBELET', status: 'STARTED', occurredAt: new Date().toISOString() } },
          token,
        );
      expect((await report(1)).data?.reportStep).toEqual({ accepted: true, duplicate: false });
      // Two hours pass: the window (60 min) of this run closes.
      await db.query(`UPDATE step_events SET received_at = received_at - interval '2 hours' WHERE run_id = $1`, [runId]);
      expect((await report(1)).data?.reportStep).toEqual({ accepted: true, duplicate: true });
      expect((await report(2)).data?.reportStep).toEqual({ accepted: true, duplicate: false });
      const late = await createCsr({ commonName: 'system:node:worker-10' });
      await listed(late);
      const verdict = (await csrNamed(late)).verdict;
      expect(verdict.decision).toBe('LEAVE_PENDING');
      expect(verdict.checks.find((check) => check.name === 'approval-window')?.detail).toMatch(/^the approval window of worker-10 closed at /);
    });
  });

  /** Whether this replica leads the cluster's auto-approver, from its metric (absent or 0 when it does not). */
  const approverLeading = async (): Promise<boolean> => /^ccos_csr_approver_leader\{cluster="sim"\} 1$/m.test(await (await fetch(`${harness.url}/metrics`)).text());

  describe('auto-approve on', () => {
    it('approves a CSR from a node in its approval window within a second, and leaves a forged one pending with its failing checks', async () => {
      const toggled = await harness.gql('mutation($c: ID!) { setCsrAutoApprove(clusterId: $c, enabled: true) { csrAutoApprove } }', { c: clusterId }, admin);
      expect(toggled.data).toEqual({ setCsrAutoApprove: { csrAutoApprove: true } });
      // Measured from the moment this replica holds the Lease, as the metric says.
      await expect.poll(approverLeading, { timeout: 10_000, interval: 20 }).toBe(true);

      await addInstallingNode('worker-2', '198.18.0.12');
      const started = performance.now();
      const name = await createCsr({ commonName: 'system:node:worker-2' });
      let elapsed = Infinity;
      while (performance.now() - started < 3000) {
        if ((await conditions(name)).includes('Approved')) {
          elapsed = performance.now() - started;
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      expect(elapsed).toBeLessThan(1000);
      // The decision row is written after the cluster's approval: the condition may be seen first.
      await expect.poll(async () => (await csrNamed(name)).decidedBy, { timeout: 3000, interval: 20 }).toBe('auto-approver');
      const approved = await csrNamed(name);
      expect(approved).toMatchObject({ status: 'APPROVED', decidedBy: 'auto-approver', statusReason: 'auto-approved: all 16 checks passed', statusReasonCode: 'csr.decision.autoApproved' });
      expect(formatServerText('zh-CN', approved?.statusReasonCode, approved?.statusReasonParams, null)).toMatch(/^已自动批准：/);
      expect(formatServerText('en', approved?.statusReasonCode, approved?.statusReasonParams, null)).toBe(approved?.statusReason);
      expect(await harness.api.dataSource.query(`SELECT actor, action, result, detail->>'node' AS node FROM audit_log WHERE target_id = $1`, [name])).toEqual([
        { actor: 'auto-approver', action: 'approveCsr', result: 'SUCCESS', node: 'worker-2' },
      ]);

      // worker-2's serving CSR, but for an address that is not worker-2's.
      const forged = await createCsr({
        asNode: 'worker-2',
        signerName: KUBELET_SERVING_SIGNER,
        commonName: 'system:node:worker-2',
        dnsNames: ['worker-2'],
        ipAddresses: ['198.18.0.12', '198.18.0.1'],
      });
      let view: CsrView | undefined;
      for (let attempt = 0; attempt < 100 && !view?.decisions.length; attempt += 1) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        view = (await listCsrs(viewer)).find((csr) => csr.name === forged);
      }
      expect(view).toMatchObject({
        status: 'PENDING',
        decidedBy: 'auto-approver',
        statusReason: 'IP address 198.18.0.1 is not an address of worker-2 in the inventory ([198.18.0.12])',
        decisions: [{ decision: 'LEFT_PENDING', actor: 'auto-approver', forced: false }],
      });
      expect(view?.statusReasonCode).toMatch(/^csr\.san-ip\./);
      expect(view?.decisions[0]?.reasonCode).toBe(view?.statusReasonCode);
      expect(formatServerText('en', view?.statusReasonCode, view?.statusReasonParams, null)).toBe(view?.statusReason);
      expect(view?.verdict.checks.filter((check) => !check.passed)).toEqual([
        { name: 'san-ip', passed: false, detail: 'IP address 198.18.0.1 is not an address of worker-2 in the inventory ([198.18.0.12])', overridable: true },
        // Filed with a node certificate the CA signed outside this install run: not the one its client CSR was issued.
        { name: 'run-credential', passed: false, detail: expect.stringMatching(/^filed with a client certificate \(X509SHA256=[0-9a-f]{12}…\) that was not issued to the install run of worker-2$/), overridable: false },
      ]);
      expect(await conditions(forged)).toEqual([]);
    });

    it('denies an impostor\'s client CSR at once and raises it: the node\'s install run, the audit log and the metric', async () => {
      const nodeId = await addInstallingNode('worker-11', '198.18.0.21');
      const name = await createCsr({ commonName: 'system:node:worker-11', shared: true });
      for (let attempt = 0; attempt < 150 && !(await conditions(name)).includes('Denied'); attempt += 1) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(await conditions(name)).toEqual(['Denied']);
      // The decision is recorded once Kubernetes has taken it.
      let view = await csrNamed(name);
      for (let attempt = 0; attempt < 100 && view.decisions.length === 0; attempt += 1) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        view = await csrNamed(name);
      }
      expect(view).toMatchObject({ status: 'DENIED', decidedBy: 'auto-approver', decisions: [{ decision: 'DENIED', actor: 'auto-approver', forced: false }] });
      expect(view.statusReason).toMatch(new RegExp(`^impostor: a client CSR for worker-11 requested by ${OPENSHIFT_NODE_BOOTSTRAPPER}, `));
      const runs = await harness.gql<{ node: { installRuns: Array<{ bootstrapIdentity: string | null; notices: Array<{ kind: string; subject: string; count: number; message: string }> }> } }>(
        'query($id: ID!) { node(id: $id) { installRuns { bootstrapIdentity notices { kind subject count message } } } }',
        { id: nodeId },
        viewer,
      );
      expect(runs.data?.node.installRuns).toEqual([
        { bootstrapIdentity: identities.get('worker-11')?.username, notices: [{ kind: 'CSR_IMPOSTOR', subject: OPENSHIFT_NODE_BOOTSTRAPPER, count: 1, message: `denied ${name}: ${view.statusReason}` }] },
      ]);
      // The notice by its code reads in Chinese too, its reason nested in the same language.
      const coded = await harness.gql<{ node: { installRuns: Array<{ notices: Array<{ message: string; messageCode: string | null; messageParams: unknown }> }> } }>(
        'query($id: ID!) { node(id: $id) { installRuns { notices { message messageCode messageParams } } } }',
        { id: nodeId },
        viewer,
      );
      const notice = coded.data?.node.installRuns[0]?.notices[0];
      expect(formatServerText('en', notice?.messageCode, notice?.messageParams, null)).toBe(notice?.message);
      expect(formatServerText('zh-CN', notice?.messageCode, notice?.messageParams, null)).toContain(`已拒绝 ${name}：冒名者：worker-11 的客户端 CSR 由 ${OPENSHIFT_NODE_BOOTSTRAPPER} 请求，`);
      const audit = await harness.api.dataSource.query(`SELECT actor, action, result, detail->>'requester' AS requester, detail->>'impostor' AS impostor FROM audit_log WHERE target_id = $1`, [name]);
      expect(audit).toEqual([{ actor: 'auto-approver', action: 'denyCsr', result: 'SUCCESS', requester: OPENSHIFT_NODE_BOOTSTRAPPER, impostor: 'true' }]);
      // worker-8's impostor, left pending while auto-approve was off, was denied the moment it was switched on: 2 in all.
      let value = 0;
      for (let attempt = 0; attempt < 50 && value < 2; attempt += 1) {
        const text = await (await fetch(`${harness.url}/metrics`)).text();
        value = Number(/^ccos_csr_impostors_denied_total\{cluster="sim"\} (\d+)$/m.exec(text)?.[1] ?? 0);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(value).toBe(2);
    });

    it('reports this replica as the holder of the cluster\'s approver Lease', async () => {
      const text = await (await fetch(`${harness.url}/metrics`)).text();
      expect(text).toMatch(/^ccos_csr_approver_leader\{cluster="sim"\} 1$/m);
    });

    it('stops approving at once when both switches are off', async () => {
      const off = await harness.gql('mutation($c: ID!) { setCsrAutoApprove(clusterId: $c, enabled: false, renewals: false) { csrAutoApprove } }', { c: clusterId }, admin);
      expect(off.errors).toBeUndefined();
      // With renewals off too the approver stops and gives up its Lease: nothing here can approve any more.
      await expect.poll(approverLeading, { timeout: 10_000, interval: 20 }).toBe(false);
      await addInstallingNode('worker-3', '198.18.0.13');
      const name = await createCsr({ commonName: 'system:node:worker-3' });
      await listed(name);
      expect((await csrNamed(name)).verdict.decision).toBe('APPROVE');
      expect(await approverLeading()).toBe(false);
      expect(await conditions(name)).toEqual([]);
      expect((await csrNamed(name)).decisions).toEqual([]);
    });
  });

  describe('csrChanged subscription', () => {
    it('tells subscribers about a new CSR and its approval, once each', async () => {
      const client = createClient({ url: `${harness.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${viewer}` } });
      const received: Array<{ kind: string; name: string; status: string | null }> = [];
      const failures: unknown[] = [];
      client.subscribe<{ csrChanged: { kind: string; name: string; csr: { status: string } | null } }>(
        { query: 'subscription($c: ID!) { csrChanged(clusterId: $c) { kind name csr { status } } }', variables: { c: clusterId } },
        {
          next: (message) => {
            const change = message.data?.csrChanged;
            if (change) {
              received.push({ kind: change.kind, name: change.name, status: change.csr?.status ?? null });
            }
          },
          error: (error) => failures.push(error),
          complete: () => undefined,
        },
      );
      const heard = async (name: string, attempts: number): Promise<boolean> => {
        for (let attempt = 0; attempt < attempts && !received.some((change) => change.name === name); attempt += 1) {
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        return received.some((change) => change.name === name);
      };
      // The protocol does not acknowledge a subscription: it is live once it has told of a change, so file probes until one is heard.
      let live = false;
      for (let probe = 0; probe < 20 && !live && failures.length === 0; probe += 1) {
        live = await heard(await createCsr({ commonName: 'system:node:subscription-probe', shared: true }), 10);
      }
      expect(failures).toEqual([]);
      expect(live).toBe(true);
      await addInstallingNode('worker-4', '198.18.0.14');
      const name = await createCsr({ commonName: 'system:node:worker-4' });
      for (let attempt = 0; attempt < 100 && !received.some((change) => change.name === name); attempt += 1) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const approve = await harness.gql('mutation($c: ID!, $n: String!) { approveCsr(clusterId: $c, name: $n) { status } }', { c: clusterId, n: name }, operator);
      expect(approve.errors).toBeUndefined();
      for (let attempt = 0; attempt < 100 && !received.some((change) => change.name === name && change.status === 'APPROVED'); attempt += 1) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await client.dispose();
      const mine = received.filter((change) => change.name === name);
      expect(mine[0]).toEqual({ kind: 'ADDED', name, status: 'PENDING' });
      expect(mine.some((change) => change.kind === 'MODIFIED' && change.status === 'APPROVED')).toBe(true);
    });
  });

  describe('metrics', () => {
    it('counts every decision written by verdict and decider, and pending CSRs and the oldest one\'s age from the cluster', async () => {
      const rows: Array<{ decision: string; decider: string; count: string }> = await harness.api.dataSource.query(
        `SELECT decision, CASE WHEN actor = 'auto-approver' THEN 'auto-approver' WHEN forced THEN 'forced' ELSE 'operator' END AS decider, count(*) AS count
           FROM csr_decisions GROUP BY 1, 2`,
      );
      // Operators approved and denied, an ADMIN forced, the auto-approver approved, denied and left some pending above.
      expect(new Set(rows.map((row) => `${row.decision}/${row.decider}`))).toEqual(
        new Set(['APPROVED/operator', 'DENIED/operator', 'APPROVED/forced', 'APPROVED/auto-approver', 'DENIED/auto-approver', 'LEFT_PENDING/auto-approver']),
      );
      const text = await (await fetch(`${harness.url}/metrics`)).text();
      const counted = [...text.matchAll(/^ccos_csr_decisions_total\{cluster="sim",verdict="(\w+)",decider="([\w-]+)"\} (\d+)$/gm)].map((match) => ({ decision: match[1], decider: match[2], count: match[3] }));
      expect(counted.sort((a, b) => `${a.decision}${a.decider}`.localeCompare(`${b.decision}${b.decider}`))).toEqual(
        rows.sort((a, b) => `${a.decision}${a.decider}`.localeCompare(`${b.decision}${b.decider}`)),
      );

      const pending = (await listCsrs(viewer, true)).length;
      expect(pending).toBeGreaterThan(0);
      expect(Number(/^ccos_csrs_pending\{cluster="sim"\} (\d+)$/m.exec(text)?.[1])).toBe(pending);
      const oldestAge = Number(/^ccos_csrs_pending_oldest_age_seconds\{cluster="sim"\} (\S+)$/m.exec(text)?.[1]);
      expect(oldestAge).toBeGreaterThan(0);
      expect(oldestAge).toBeLessThan(600);
    });
  });
});

import { describe, expect, expectTypeOf, it } from 'vitest';
import { CERT_NOT_PINNED, HttpError, type HttpRequest } from '@ccos/agent/util-host';
import { FakeClock, FakeHttp, requestHeader, type FakeHttpReply } from '@ccos/agent/util-host/testing';
import { AgentRunText, type ReportStepInput, ReportStepText, ReportStepsText } from '@ccos/shared/api-schema';
import { GraphqlApiClient } from './api-client';
import { AGENT_RUN, REPORT_STEP, REPORT_STEPS, type StepEvent } from './operations';

const API = 'http://198.18.0.1:4000';
const EVENT: StepEvent = {
  runId: 'run-1', seq: 7, step: 'APPLY_IGNITION', status: 'FAILED', progress: 40,
  message: 'not Ignition', messageCode: 'agent.cancelled', messageParams: {}, detail: { code: 'IGNITION_NOT_IGNITION' }, occurredAt: '2026-12-01T00:00:00.000Z',
};

function api(reply: FakeHttpReply | (() => FakeHttpReply)) {
  const http = new FakeHttp(() => (typeof reply === 'function' ? reply() : reply));
  return { http, client: new GraphqlApiClient({ apiUrl: API, token: 'agt_token-1234', serviceTls: null, http, clock: new FakeClock() }) };
}

const json = (body: unknown, status = 200): FakeHttpReply => ({ status, headers: { 'content-type': 'application/json', date: 'Tue, 01 Dec 2026 00:00:03 GMT' }, body: JSON.stringify(body) });

describe('GraphqlApiClient', () => {
  it('sends ReportStep as agreed: POST /graphql, bearer token, the whole input', async () => {
    const { http, client } = api(json({ data: { reportStep: { accepted: true, duplicate: true, cancelRequested: false } } }));
    expect(await client.reportStep(EVENT)).toEqual({ accepted: true, duplicate: true, cancelRequested: false });
    const request = http.requests[0] as HttpRequest;
    expect(request.url).toBe(`${API}/graphql`);
    expect(request.method).toBe('POST');
    expect(requestHeader(request, 'authorization')).toBe('Bearer agt_token-1234');
    expect(requestHeader(request, 'content-type')).toBe('application/json');
    const body = JSON.parse(String(request.body));
    expect(body.operationName).toBe('ReportStep');
    expect(body.query).toBe(ReportStepText.toString());
    expect(body.variables.input).toEqual({ ...EVENT });
  });

  it('sends ReportSteps with every event whole, and reads which were stored before', async () => {
    const { http, client } = api(json({ data: { reportSteps: { accepted: 2, duplicateSeqs: [7], cancelRequested: true } } }));
    const next = { ...EVENT, seq: 8, status: 'STARTED' as const };
    expect(await client.reportSteps([EVENT, next])).toEqual({ accepted: 2, duplicateSeqs: [7], cancelRequested: true });
    const body = JSON.parse(String((http.requests[0] as HttpRequest).body));
    expect(body.operationName).toBe('ReportSteps');
    expect(body.query).toBe(ReportStepsText.toString());
    expect(body.variables.inputs).toEqual([{ ...EVENT }, { ...next }]);
  });

  it('takes a ReportSteps answer without its fields as a refusal, not as a delivery', async () => {
    const { client } = api(json({ data: { reportSteps: { accepted: 2 } } }));
    await expect(client.reportSteps([EVENT, { ...EVENT, seq: 8 }])).rejects.toMatchObject({ kind: 'rejected', code: 'BAD_RESPONSE' });
  });

  it('reads agentRun with its timing and the Date header', async () => {
    const run = { runId: 'run-1', nodeName: 'h1', serverTime: '2026-12-01T00:00:03.000Z', hostnameConflict: null, hostnameConflictCode: null, hostnameConflictParams: null, ipConflict: 'Node h7 has 198.18.0.11', ipConflictCode: null, ipConflictParams: null, nodeRegistered: true, nodeReady: false, pendingCsrNames: ['csr-abc'], cancelRequested: false };
    const { client } = api(json({ data: { agentRun: run } }));
    const reply = await client.agentRun();
    expect(reply.run).toEqual(run);
    expect(reply.dateHeader).toBe('Tue, 01 Dec 2026 00:00:03 GMT');
  });

  it.each([
    ['UNAUTHENTICATED', 200, 'unauthenticated'],
    ['UNAUTHENTICATED', 401, 'unauthenticated'],
    ['INTERNAL_SERVER_ERROR', 500, 'transient'],
    ['UNAVAILABLE', 200, 'transient'],
    ['CLUSTER_UNREACHABLE', 200, 'transient'],
    ['BAD_USER_INPUT', 400, 'rejected'],
    ['GRAPHQL_VALIDATION_FAILED', 400, 'rejected'],
  ])('classifies a GraphQL error %s (HTTP %i) as %s', async (code, status, kind) => {
    const { client } = api(json({ errors: [{ message: 'nope', extensions: { code } }], data: null }, status));
    await expect(client.reportStep(EVENT)).rejects.toMatchObject({ kind, code });
  });

  it.each([
    [{ status: 502, headers: { 'content-type': 'text/html' }, body: '<html>Bad Gateway</html>' }, 'transient'],
    [{ status: 200, headers: { 'content-type': 'text/html' }, body: '<html>captive portal</html>' }, 'transient'],
    [{ status: 401, body: 'Unauthorized' }, 'unauthenticated'],
    [{ status: 404, body: 'Cannot POST /graphql' }, 'rejected'],
  ] as [FakeHttpReply, string][])('classifies a non-GraphQL answer %#', async (reply, kind) => {
    const { client } = api(reply);
    await expect(client.reportStep(EVENT)).rejects.toMatchObject({ kind });
  });

  it('treats network failures as transient', async () => {
    const http = new FakeHttp(() => {
      throw new HttpError('connect EHOSTUNREACH', 'EHOSTUNREACH');
    });
    const client = new GraphqlApiClient({ apiUrl: API, token: 'agt_token-1234', serviceTls: null, http, clock: new FakeClock() });
    await expect(client.agentRun()).rejects.toMatchObject({ kind: 'transient', code: 'EHOSTUNREACH' });
  });

  it('sends the service pin on every call (events, run state, health, diagnostics); a refused certificate is retried later, like a link down', async () => {
    const pin = { publicKeySha256: ['47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='] };
    const http = new FakeHttp(() => {
      throw new HttpError("the service's certificate at 198.18.0.1:4000 (…) is not the pinned one", CERT_NOT_PINNED);
    });
    const client = new GraphqlApiClient({ apiUrl: 'https://198.18.0.1:4000', token: 'agt_token-1234', serviceTls: pin, http, clock: new FakeClock() });
    await expect(client.reportStep(EVENT)).rejects.toMatchObject({ kind: 'transient', code: CERT_NOT_PINNED, message: expect.stringContaining('is not the pinned one') });
    await expect(client.agentRun()).rejects.toMatchObject({ code: CERT_NOT_PINNED });
    await expect(client.health()).rejects.toMatchObject({ code: CERT_NOT_PINNED });
    await expect(client.uploadDiagnostics(Buffer.from([0x1f, 0x8b]))).rejects.toMatchObject({ code: CERT_NOT_PINNED });
    expect(http.requests.map((request) => request.pin)).toEqual([pin, pin, pin, pin]);
  });

  it('uploads diagnostics as application/gzip and health-checks /healthz', async () => {
    const { http, client } = api({ status: 204 });
    await client.uploadDiagnostics(Buffer.from([0x1f, 0x8b]));
    expect(http.requests[0]?.url).toBe(`${API}/agent/diagnostics`);
    expect(requestHeader(http.requests[0] as HttpRequest, 'content-type')).toBe('application/gzip');
    expect((await client.health()).status).toBe(204);
    expect(http.requests[1]?.url).toBe(`${API}/healthz`);
    const tooBig = api({ status: 413, body: 'too large' });
    await expect(tooBig.client.uploadDiagnostics(Buffer.alloc(1))).rejects.toMatchObject({ kind: 'rejected', code: 'HTTP_413' });
  });
});

describe('the agent\'s operations and the schema', () => {
  it('sends the operations codegen validated against schema.graphql, and events shaped as its ReportStepInput', () => {
    expect(REPORT_STEP).toBe(ReportStepText.toString());
    expect(REPORT_STEPS).toBe(ReportStepsText.toString());
    expect(AGENT_RUN).toBe(AgentRunText.toString());
    expect(REPORT_STEP).toMatch(/^\s*mutation ReportStep\(\$input: ReportStepInput!\)/);
    // A compile error (typecheck runs on specs) when the spool's event stops matching the input type.
    expectTypeOf<StepEvent>().toMatchTypeOf<ReportStepInput>();
  });
});

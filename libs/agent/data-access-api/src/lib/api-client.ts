import { HttpError, isJsonObject, readBody, type Clock, type Http, type HttpResponse, type JsonObject, type TlsPin } from '@ccos/agent/util-host';
import { ApiError, graphqlFailureKind, httpFailureKind } from './api-errors';
import { AGENT_RUN, REPORT_STEP, REPORT_STEPS, type AgentRun, type ReportStepResult, type ReportStepsResult, type StepEvent } from './operations';

/** `agentRun` with what the clock-skew check needs: when it was asked and answered, locally. */
export interface AgentRunReply {
  readonly run: AgentRun;
  /** Local wall-clock ms when the request was sent and when the answer arrived. */
  readonly sentAt: number;
  readonly receivedAt: number;
  /** The response's `Date` header, if any. */
  readonly dateHeader: string | null;
}

export interface HealthReply {
  readonly status: number;
  readonly ms: number;
}

/**
 * The installer service as the agent sees it: GraphQL for events and run
 * state, plain HTTP for health and diagnostics. Every call carries the
 * run's bearer token and fails with an {@link ApiError}.
 */
export interface ApiClient {
  reportStep(event: StepEvent, signal?: AbortSignal): Promise<ReportStepResult>;
  /** Several events of the run in one request (services before it answer GRAPHQL_VALIDATION_FAILED). */
  reportSteps(events: readonly StepEvent[], signal?: AbortSignal): Promise<ReportStepsResult>;
  agentRun(signal?: AbortSignal): Promise<AgentRunReply>;
  /** `GET /healthz`; resolves with any HTTP status, fails only when no answer came. */
  health(signal?: AbortSignal): Promise<HealthReply>;
  /** `POST /agent/diagnostics` with a .tar.gz. */
  uploadDiagnostics(archive: Uint8Array, signal?: AbortSignal): Promise<void>;
}

export interface GraphqlApiClientOptions {
  /** e.g. `http://198.18.0.1:4000`, no trailing slash. */
  readonly apiUrl: string;
  readonly token: string;
  /** How to recognise the service on https (see AgentConfig.serviceTls); null on http. */
  readonly serviceTls: TlsPin | null;
  readonly http: Http;
  readonly clock: Clock;
}

const MAX_RESPONSE_BYTES = 1024 * 1024;

/** {@link ApiClient} over HTTP. */
export class GraphqlApiClient implements ApiClient {
  constructor(private readonly options: GraphqlApiClientOptions) {}

  async reportStep(event: StepEvent, signal?: AbortSignal): Promise<ReportStepResult> {
    const { data } = await this.graphql('ReportStep', REPORT_STEP, { input: stepEventInput(event) }, signal);
    const result = data['reportStep'];
    if (!isJsonObject(result) || typeof result['accepted'] !== 'boolean') {
      throw new ApiError('rejected', 'BAD_RESPONSE', 'reportStep answered without `accepted`');
    }
    return {
      accepted: result['accepted'],
      duplicate: result['duplicate'] === true,
      cancelRequested: result['cancelRequested'] === true,
    };
  }

  async reportSteps(events: readonly StepEvent[], signal?: AbortSignal): Promise<ReportStepsResult> {
    const { data } = await this.graphql('ReportSteps', REPORT_STEPS, { inputs: events.map(stepEventInput) }, signal);
    const result = data['reportSteps'];
    if (!isJsonObject(result) || typeof result['accepted'] !== 'number' || !Array.isArray(result['duplicateSeqs'])) {
      throw new ApiError('rejected', 'BAD_RESPONSE', 'reportSteps answered without `accepted` and `duplicateSeqs`');
    }
    return {
      accepted: result['accepted'],
      duplicateSeqs: result['duplicateSeqs'].filter((seq): seq is number => typeof seq === 'number'),
      cancelRequested: result['cancelRequested'] === true,
    };
  }

  async agentRun(signal?: AbortSignal): Promise<AgentRunReply> {
    const sentAt = this.options.clock.now();
    const { data, response } = await this.graphql('AgentRun', AGENT_RUN, {}, signal);
    const receivedAt = this.options.clock.now();
    const run = data['agentRun'];
    if (!isJsonObject(run) || typeof run['serverTime'] !== 'string') {
      throw new ApiError('rejected', 'BAD_RESPONSE', 'agentRun answered without `serverTime`');
    }
    const text = (value: unknown): string | null => (typeof value === 'string' && value.length > 0 ? value : null);
    return {
      run: {
        runId: String(run['runId'] ?? ''),
        nodeName: String(run['nodeName'] ?? ''),
        serverTime: run['serverTime'],
        hostnameConflict: text(run['hostnameConflict']),
        hostnameConflictCode: text(run['hostnameConflictCode']),
        hostnameConflictParams: isJsonObject(run['hostnameConflictParams']) ? run['hostnameConflictParams'] : null,
        ipConflict: text(run['ipConflict']),
        ipConflictCode: text(run['ipConflictCode']),
        ipConflictParams: isJsonObject(run['ipConflictParams']) ? run['ipConflictParams'] : null,
        nodeRegistered: run['nodeRegistered'] === true,
        nodeReady: run['nodeReady'] === true,
        pendingCsrNames: Array.isArray(run['pendingCsrNames']) ? run['pendingCsrNames'].filter((name): name is string => typeof name === 'string') : [],
        cancelRequested: run['cancelRequested'] === true,
      },
      sentAt,
      receivedAt,
      dateHeader: response.headers['date'] ?? null,
    };
  }

  async health(signal?: AbortSignal): Promise<HealthReply> {
    const started = this.options.clock.monotonic();
    const response = await this.send({ method: 'GET', path: '/healthz', signal, timeoutMs: 10_000 });
    response.discard();
    return { status: response.status, ms: Math.round(this.options.clock.monotonic() - started) };
  }

  async uploadDiagnostics(archive: Uint8Array, signal?: AbortSignal): Promise<void> {
    const response = await this.send({
      method: 'POST',
      path: '/agent/diagnostics',
      body: archive,
      contentType: 'application/gzip',
      signal,
      timeoutMs: 120_000,
    });
    const body = await readBody(response, MAX_RESPONSE_BYTES).catch(() => Buffer.alloc(0));
    if (response.status < 200 || response.status > 299) {
      throw new ApiError(httpFailureKind(response.status), `HTTP_${response.status}`, `diagnostics upload answered HTTP ${response.status}: ${body.toString('utf8').slice(0, 200)}`);
    }
  }

  private async graphql(
    operationName: string,
    query: string,
    variables: JsonObject,
    signal?: AbortSignal,
  ): Promise<{ data: JsonObject; response: HttpResponse }> {
    const response = await this.send({
      method: 'POST',
      path: '/graphql',
      body: JSON.stringify({ operationName, query, variables }),
      contentType: 'application/json',
      signal,
      timeoutMs: 30_000,
    });
    let text: string;
    try {
      text = (await readBody(response, MAX_RESPONSE_BYTES)).toString('utf8');
    } catch (error) {
      throw new ApiError('transient', error instanceof HttpError ? error.code : 'EREAD', `reading the ${operationName} answer failed: ${(error as Error).message}`, { cause: error });
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      const kind = response.status >= 200 && response.status < 300 ? 'transient' : httpFailureKind(response.status);
      throw new ApiError(kind, `HTTP_${response.status}`, `${operationName} answered HTTP ${response.status} with a body that is not JSON: ${text.slice(0, 120)}`);
    }
    const errors = isJsonObject(parsed) && Array.isArray(parsed['errors']) ? parsed['errors'] : [];
    if (errors.length > 0) {
      const first = isJsonObject(errors[0]) ? errors[0] : {};
      const extensions = isJsonObject(first['extensions']) ? first['extensions'] : {};
      const code = typeof extensions['code'] === 'string' ? extensions['code'] : response.status === 401 ? 'UNAUTHENTICATED' : `HTTP_${response.status}`;
      const kinds = errors.map((error) => {
        const ext = isJsonObject(error) && isJsonObject(error['extensions']) ? error['extensions'] : {};
        return typeof ext['code'] === 'string' ? graphqlFailureKind(ext['code']) : null;
      });
      const kind = kinds.includes('unauthenticated') ? 'unauthenticated' : typeof extensions['code'] === 'string' ? graphqlFailureKind(code) : httpFailureKind(response.status || 500);
      throw new ApiError(kind, kinds.includes('unauthenticated') ? 'UNAUTHENTICATED' : code, `${operationName}: ${String(first['message'] ?? 'GraphQL error')}`);
    }
    if (response.status < 200 || response.status > 299) {
      throw new ApiError(httpFailureKind(response.status), `HTTP_${response.status}`, `${operationName} answered HTTP ${response.status}`);
    }
    const data = isJsonObject(parsed) ? parsed['data'] : undefined;
    if (!isJsonObject(data)) {
      throw new ApiError('rejected', 'BAD_RESPONSE', `${operationName} answered without data`);
    }
    return { data, response };
  }

  private async send(request: {
    readonly method: 'GET' | 'POST';
    readonly path: string;
    readonly body?: string | Uint8Array;
    readonly contentType?: string;
    readonly signal?: AbortSignal;
    readonly timeoutMs: number;
  }): Promise<HttpResponse> {
    try {
      return await this.options.http.request({
        method: request.method,
        url: `${this.options.apiUrl}${request.path}`,
        headers: {
          authorization: `Bearer ${this.options.token}`,
          accept: 'application/json',
          ...(request.contentType === undefined ? {} : { 'content-type': request.contentType }),
        },
        body: request.body,
        ...(this.options.serviceTls === null ? {} : { pin: this.options.serviceTls }),
        timeoutMs: request.timeoutMs,
        idleTimeoutMs: 15_000,
        signal: request.signal,
      });
    } catch (error) {
      const code = error instanceof HttpError ? error.code : 'EREQUEST';
      // Transient even for a refused certificate: events wait in the spool until the
      // real service answers again, and are never handed to whoever answered instead.
      throw new ApiError('transient', code, `${request.method} ${request.path}: ${(error as Error).message} (${code})`, { cause: error });
    }
  }
}

/** `ReportStepInput` of a spooled event. */
function stepEventInput(event: StepEvent): JsonObject {
  return {
    runId: event.runId,
    seq: event.seq,
    step: event.step,
    status: event.status,
    progress: event.progress ?? null,
    message: event.message ?? null,
    messageCode: event.messageCode ?? null,
    messageParams: event.messageParams ?? null,
    detail: event.detail ?? null,
    occurredAt: event.occurredAt,
  };
}

import type { Clock } from '@ccos/agent/util-host';
import type { AgentRunReply, ApiClient, HealthReply } from '../lib/api-client';
import { ApiError } from '../lib/api-errors';
import type { AgentRun, ReportStepResult, ReportStepsResult, StepEvent } from '../lib/operations';

/**
 * The installer service as a unit test needs it: records delivered events
 * (once per sequence number, as the service stores them), answers
 * `agentRun` from a mutable state, and can be told to fail.
 */
export class FakeApiClient implements ApiClient {
  /** Every event sent (alone or in a batch), including failed and duplicate ones. */
  readonly attempts: StepEvent[] = [];
  /** The events of every reportStep (one) and reportSteps (several) call, in call order. */
  readonly requests: StepEvent[][] = [];
  /** false: answers reportSteps as a service from before batches does. */
  takesBatches = true;
  /** Stored events by sequence number. */
  readonly stored = new Map<number, StepEvent>();
  readonly uploads: Uint8Array[] = [];
  run: AgentRun = {
    runId: 'run-1',
    nodeName: 'h1',
    serverTime: '',
    hostnameConflict: null,
    hostnameConflictCode: null,
    hostnameConflictParams: null,
    ipConflict: null,
    ipConflictCode: null,
    ipConflictParams: null,
    nodeRegistered: false,
    nodeReady: false,
    pendingCsrNames: [],
    cancelRequested: false,
  };
  /** Set to make calls fail: return an error to throw, or null to answer. */
  failReportStep: (event: StepEvent) => ApiError | null = () => null;
  failAgentRun: () => ApiError | null = () => null;
  failUpload: () => ApiError | null = () => null;
  health: (signal?: AbortSignal) => Promise<HealthReply> = async () => ({ status: 200, ms: 2 });
  /** Service clock minus agent clock, in ms. */
  serverOffsetMs = 0;
  /** Called on every agentRun, e.g. to move the Node along. */
  onAgentRun: (call: number) => void = () => undefined;
  private agentRunCalls = 0;

  constructor(private readonly clock: Clock) {}

  /** Stored events in sequence order. */
  events(): StepEvent[] {
    return [...this.stored.values()].sort((a, b) => a.seq - b.seq);
  }

  async reportStep(event: StepEvent): Promise<ReportStepResult> {
    this.attempts.push(event);
    this.requests.push([event]);
    const failure = this.failReportStep(event);
    if (failure !== null) {
      throw failure;
    }
    const duplicate = this.stored.has(event.seq);
    if (!duplicate) {
      this.stored.set(event.seq, event);
    }
    return { accepted: true, duplicate, cancelRequested: this.run.cancelRequested };
  }

  /** All or nothing, as the service's batch: an event `failReportStep` fails fails the whole request. */
  async reportSteps(events: readonly StepEvent[]): Promise<ReportStepsResult> {
    if (!this.takesBatches) {
      throw new ApiError('rejected', 'GRAPHQL_VALIDATION_FAILED', 'ReportSteps: Cannot query field "reportSteps" on type "Mutation".');
    }
    this.requests.push([...events]);
    this.attempts.push(...events);
    for (const event of events) {
      const failure = this.failReportStep(event);
      if (failure !== null) {
        throw failure;
      }
    }
    const duplicateSeqs = events.filter((event) => this.stored.has(event.seq)).map((event) => event.seq);
    for (const event of events) {
      if (!this.stored.has(event.seq)) {
        this.stored.set(event.seq, event);
      }
    }
    return { accepted: events.length, duplicateSeqs, cancelRequested: this.run.cancelRequested };
  }

  async agentRun(): Promise<AgentRunReply> {
    this.agentRunCalls += 1;
    this.onAgentRun(this.agentRunCalls);
    const failure = this.failAgentRun();
    if (failure !== null) {
      throw failure;
    }
    const now = this.clock.now();
    return {
      run: { ...this.run, serverTime: new Date(now + this.serverOffsetMs).toISOString() },
      sentAt: now,
      receivedAt: now,
      dateHeader: new Date(now + this.serverOffsetMs).toUTCString(),
    };
  }

  async uploadDiagnostics(archive: Uint8Array): Promise<void> {
    const failure = this.failUpload();
    if (failure !== null) {
      throw failure;
    }
    this.uploads.push(archive);
  }
}

/** A network failure as the client reports it. */
export function unreachable(code = 'ECONNREFUSED'): ApiError {
  return new ApiError('transient', code, `connect ${code} 198.18.0.1:4000`);
}

export function unauthenticated(): ApiError {
  return new ApiError('unauthenticated', 'UNAUTHENTICATED', 'ReportStep: the agent token is invalid or expired');
}

import { isRunFinished, isUnauthenticated, type AgentRunReply, type ApiClient } from '@ccos/agent/data-access-api';

/**
 * Why a run must stop early, from wherever it is learnt: an event answer
 * or an agentRun poll saying `cancelRequested`, the token being refused, or the
 * service saying the run has ended (RUN_FINISHED).
 */
export class RunControl {
  private readonly operator = new AbortController();
  private readonly token = new AbortController();
  private readonly ended = new AbortController();

  /** The operator cancelled the run in the console. */
  cancelByOperator(): void {
    this.operator.abort(new Error('cancelled by the operator'));
  }

  /** The service refused the token: the run is over on its side. */
  tokenRefused(): void {
    this.token.abort(new Error('the run token was refused'));
  }

  /** The service said the run has ended (it failed, succeeded or was cancelled there): it takes no more events. */
  runEnded(): void {
    this.ended.abort(new Error('the run has ended on the service'));
  }

  /** What the event sender tells this control (its answers' cancel, a refused token, the run's end). */
  get senderHooks(): { onCancelRequested: () => void; onUnauthenticated: () => void; onRunFinished: () => void } {
    return { onCancelRequested: () => this.cancelByOperator(), onUnauthenticated: () => this.tokenRefused(), onRunFinished: () => this.runEnded() };
  }

  get runFinished(): boolean {
    return this.ended.signal.aborted;
  }

  get operatorCancelled(): boolean {
    return this.operator.signal.aborted;
  }

  get unauthenticated(): boolean {
    return this.token.signal.aborted;
  }

  get signals(): AbortSignal[] {
    return [this.operator.signal, this.token.signal, this.ended.signal];
  }

  /** The API with its answers watched: `cancelRequested` and refused tokens reach this control. */
  observe(api: ApiClient): ApiClient {
    const watch = async <T>(call: () => Promise<T>): Promise<T> => {
      try {
        return await call();
      } catch (error) {
        if (isUnauthenticated(error)) {
          this.tokenRefused();
        }
        if (isRunFinished(error)) {
          this.runEnded();
        }
        throw error;
      }
    };
    return {
      reportStep: (event, signal) => watch(() => api.reportStep(event, signal)),
      reportSteps: (events, signal) => watch(() => api.reportSteps(events, signal)),
      agentRun: (signal) => watch(async (): Promise<AgentRunReply> => {
        const reply = await api.agentRun(signal);
        if (reply.run.cancelRequested) {
          this.cancelByOperator();
        }
        return reply;
      }),
      health: (signal) => api.health(signal),
      uploadDiagnostics: (archive, signal) => watch(() => api.uploadDiagnostics(archive, signal)),
    };
  }
}

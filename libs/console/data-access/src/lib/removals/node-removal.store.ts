import { Injectable, computed, inject, signal } from '@angular/core';
import { Apollo } from 'apollo-angular';
import { firstValueFrom } from 'rxjs';
import { NodeDocument, RemovalPreviewDocument, RemoveNodeDocument, type RemoveNodeInput } from '@ccos/shared/api-schema';
import { liveQuery } from '../apollo/live-query';
import { type ApiProblem, type Outcome, problemsOf } from '../errors/api-problem';
import { FormSubmission } from '../forms/form-submission';
import type { RemovalPreviewView, RemovalRunView } from './removal';

/**
 * The remove-node page's server side: the node, what a removal with the chosen options
 * would do (asked again when the options change; the answer to the newest question wins),
 * and starting it. Provide it in the page.
 */
@Injectable()
export class NodeRemovalStore {
  private readonly apollo = inject(Apollo);
  private readonly nodeQuery = liveQuery(NodeDocument);
  private nodeId: string | null = null;
  private asked = 0;
  private readonly previewState = signal<{ readonly preview: RemovalPreviewView | null; readonly loading: boolean; readonly problems: readonly ApiProblem[] }>({
    preview: null,
    loading: false,
    problems: [],
  });
  private readonly starting = new FormSubmission();

  readonly node = computed(() => this.nodeQuery.data()?.node ?? null);
  readonly loading = computed(() => this.nodeQuery.loading() && this.nodeQuery.data() === undefined);
  readonly problems = this.nodeQuery.problems;
  readonly preview = computed(() => this.previewState().preview);
  readonly previewLoading = computed(() => this.previewState().loading);
  readonly previewProblems = computed(() => this.previewState().problems);
  readonly saving = this.starting.sending;
  readonly startProblems = this.starting.problems;
  /** The API's problems by option (`confirmHostname`, `timeoutSeconds` …). */
  readonly fieldErrors = this.starting.fieldErrors;

  select(nodeId: string): void {
    if (nodeId !== this.nodeId) {
      this.nodeId = nodeId;
      this.nodeQuery.watch({ id: nodeId });
    }
  }

  reload(): void {
    this.nodeQuery.refetch();
  }

  /** Asks what a removal with `options` would do now. Changes nothing. */
  async loadPreview(options: RemoveNodeInput): Promise<void> {
    const nodeId = this.nodeId;
    if (!nodeId) {
      return;
    }
    const question = ++this.asked;
    this.previewState.update((state) => ({ ...state, loading: true }));
    try {
      const result = await firstValueFrom(
        this.apollo.query({ query: RemovalPreviewDocument, variables: { nodeId, options }, fetchPolicy: 'network-only', context: { errorDisplay: 'caller' } }),
      );
      if (question === this.asked) {
        this.previewState.set({ preview: result.data?.removalPreview ?? null, loading: false, problems: result.error ? problemsOf(result.error) : [] });
      }
    } catch (error) {
      if (question === this.asked) {
        this.previewState.set({ preview: null, loading: false, problems: problemsOf(error) });
      }
    }
  }

  /** 移除节点: starts the removal; follow it on the node page. */
  async remove(options: RemoveNodeInput): Promise<Outcome<RemovalRunView>> {
    const nodeId = this.nodeId;
    if (!nodeId) {
      return { ok: false, problems: [{ code: 'UNKNOWN', message: 'no node selected', field: null }] };
    }
    return this.starting.send(async () => {
      const result = await firstValueFrom(this.apollo.mutate({ mutation: RemoveNodeDocument, variables: { nodeId, options }, context: { errorDisplay: 'fields' } }));
      return { value: result.data?.removeNode, error: result.error };
    });
  }
}

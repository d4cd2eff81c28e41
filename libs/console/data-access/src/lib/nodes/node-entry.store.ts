import { Injectable, computed, inject, signal } from '@angular/core';
import { Apollo } from 'apollo-angular';
import { firstValueFrom } from 'rxjs';
import { AddNodeDocument, type AddNodeInput, NodesDocument } from '@ccos/shared/api-schema';
import { type ApiProblem, type Outcome, fieldProblems, problemsOf } from '../errors/api-problem';
import { type NodeSummary, byHostname } from './node';

/**
 * The add-node form's server side (the seed's 录入节点): sending, and the API's problems
 * per field. The input, with its password or key, is not kept after the call.
 */
@Injectable()
export class NodeEntryStore {
  private readonly apollo = inject(Apollo);
  private readonly sending = signal(false);
  private readonly lastProblems = signal<readonly ApiProblem[]>([]);

  readonly saving = this.sending.asReadonly();
  readonly problems = this.lastProblems.asReadonly();
  /** The API's messages keyed by input field (`hostname`, `ip`, `labels`, `privateKey` …). */
  readonly fieldErrors = computed(() => fieldProblems(this.lastProblems()));

  clearProblems(): void {
    this.lastProblems.set([]);
  }

  async add(input: AddNodeInput): Promise<Outcome<NodeSummary>> {
    this.sending.set(true);
    this.lastProblems.set([]);
    try {
      const result = await firstValueFrom(
        this.apollo.mutate({
          mutation: AddNodeDocument,
          variables: { input },
          context: { errorDisplay: 'fields' },
          update: (cache, { data }) => {
            const added = data?.addNode;
            if (added) {
              cache.updateQuery({ query: NodesDocument, variables: { clusterId: added.clusterId } }, (existing) =>
                existing ? { nodes: [...existing.nodes.filter((node) => node.id !== added.id), added].sort(byHostname) } : existing,
              );
            }
          },
        }),
      );
      const node = result.data?.addNode;
      if (node) {
        return { ok: true, value: node };
      }
      return this.failed(problemsOf(result.error));
    } catch (error) {
      return this.failed(problemsOf(error));
    } finally {
      this.sending.set(false);
    }
  }

  private failed(problems: readonly ApiProblem[]): Outcome<NodeSummary> {
    this.lastProblems.set(problems);
    return { ok: false, problems };
  }
}

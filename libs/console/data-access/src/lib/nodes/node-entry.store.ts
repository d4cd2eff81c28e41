import { Injectable, inject } from '@angular/core';
import { Apollo } from 'apollo-angular';
import { firstValueFrom } from 'rxjs';
import { AddNodeDocument, type AddNodeInput, NodesDocument } from '@ccos/shared/api-schema';
import type { Outcome } from '../errors/api-problem';
import { FormSubmission } from '../forms/form-submission';
import { type NodeSummary, byHostname } from './node';

/**
 * The add-node form's server side (the seed's 录入节点): sending, and the API's problems
 * per field. The input, with its password or key, is not kept after the call.
 */
@Injectable()
export class NodeEntryStore {
  private readonly apollo = inject(Apollo);
  private readonly submission = new FormSubmission();

  readonly saving = this.submission.sending;
  readonly problems = this.submission.problems;
  /** The API's messages keyed by input field (`hostname`, `ip`, `labels`, `privateKey` …). */
  readonly fieldErrors = this.submission.fieldErrors;

  clearProblems(): void {
    this.submission.clear();
  }

  add(input: AddNodeInput): Promise<Outcome<NodeSummary>> {
    return this.submission.send(async () => {
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
      return { value: result.data?.addNode, error: result.error };
    });
  }
}

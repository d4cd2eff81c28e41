import { Injectable, computed, inject, signal } from '@angular/core';
import { Apollo } from 'apollo-angular';
import { firstValueFrom } from 'rxjs';
import { HostManifestDocument, type HostManifestFieldsFragment, InspectNodeDocument } from '@ccos/shared/api-schema';
import { liveQuery } from '../apollo/live-query';
import { type Outcome, problemsOf } from '../errors/api-problem';

/**
 * What one node's host runs by its last install, and what the last inspection found; `inspect`
 * hashes the files on the host now (OPERATOR). Provide it in the page; call {@link select}, and
 * {@link reload} when the node's status changes (a finished install records anew).
 */
@Injectable()
export class HostManifestStore {
  private readonly apollo = inject(Apollo);
  private readonly query = liveQuery(HostManifestDocument);
  private readonly inspected = signal<HostManifestFieldsFragment | null>(null);
  private readonly inspecting = signal(false);
  private nodeId: string | null = null;

  /** The latest of what the query and an inspection answered. */
  readonly manifest = computed(() => this.inspected() ?? this.query.data()?.hostManifest ?? null);
  readonly problems = this.query.problems;
  readonly busy = this.inspecting.asReadonly();

  select(nodeId: string): void {
    if (nodeId !== this.nodeId) {
      this.nodeId = nodeId;
      this.inspected.set(null);
      this.query.watch({ nodeId });
    }
  }

  reload(): void {
    this.inspected.set(null);
    this.query.refetch();
  }

  async inspect(): Promise<Outcome<HostManifestFieldsFragment>> {
    const nodeId = this.nodeId;
    if (!nodeId) {
      return { ok: false, problems: [{ code: 'UNKNOWN', message: 'no node selected', field: null }] };
    }
    this.inspecting.set(true);
    try {
      const result = await firstValueFrom(this.apollo.mutate({ mutation: InspectNodeDocument, variables: { nodeId } }));
      const value = result.data?.inspectNode;
      if (!value) {
        return { ok: false, problems: problemsOf(result.error) };
      }
      this.inspected.set(value);
      return { ok: true, value };
    } catch (error) {
      return { ok: false, problems: problemsOf(error) };
    } finally {
      this.inspecting.set(false);
    }
  }
}

import { Injectable, computed, inject, signal } from '@angular/core';
import { Apollo } from 'apollo-angular';
import { firstValueFrom } from 'rxjs';
import { ApplyInventoryDocument, type ApplyInventoryMutation, ExportInventoryDocument, type InventoryCredentialInput, type InventoryPlanFieldsFragment, PlanInventoryDocument } from '@ccos/shared/api-schema';
import type { Outcome } from '../errors/api-problem';
import { FormSubmission } from '../forms/form-submission';

export type InventoryPlanView = InventoryPlanFieldsFragment;
export type InventoryChangeView = InventoryPlanView['changes'][number];
export type InventoryApplied = ApplyInventoryMutation['applyInventory'];

/**
 * The inventory page's round trips: plan a file (nothing changes), apply the plan shown (the API
 * refuses if the nodes it names changed since), and export the cluster as a file. The plan and
 * what the last apply started stay here for the page to show. Provide it in the page.
 */
@Injectable()
export class InventoryStore {
  private readonly apollo = inject(Apollo);
  private readonly planState = signal<{ readonly document: string; readonly plan: InventoryPlanView } | null>(null);
  private readonly appliedState = signal<InventoryApplied | null>(null);

  readonly plan = computed(() => this.planState()?.plan ?? null);
  readonly applied = this.appliedState.asReadonly();
  /** Planning: a file the API refuses comes back as the `document` field's problem. */
  readonly planning = new FormSubmission();
  readonly applying = new FormSubmission();
  readonly exporting = new FormSubmission();

  async planFile(document: string): Promise<Outcome<InventoryPlanView>> {
    this.planState.set(null);
    this.appliedState.set(null);
    const outcome = await this.planning.send(async () => {
      const result = await firstValueFrom(this.apollo.query({ query: PlanInventoryDocument, variables: { document }, fetchPolicy: 'no-cache', context: { errorDisplay: 'fields' } }));
      return { value: result.data?.planInventory, error: result.error };
    });
    if (outcome.ok) {
      this.planState.set({ document, plan: outcome.value });
    }
    return outcome;
  }

  /** Applies the plan on show, with the SSH secrets of the hosts it adds. */
  async apply(credentials: readonly InventoryCredentialInput[]): Promise<Outcome<InventoryApplied>> {
    const planned = this.planState();
    if (!planned) {
      return { ok: false, problems: [{ code: 'UNKNOWN', message: 'no plan to apply', field: null }] };
    }
    const outcome = await this.applying.send(async () => {
      const result = await firstValueFrom(this.apollo.mutate({ mutation: ApplyInventoryDocument, variables: { document: planned.document, fingerprint: planned.plan.fingerprint, credentials: [...credentials] } }));
      return { value: result.data?.applyInventory, error: result.error };
    });
    if (outcome.ok) {
      this.appliedState.set(outcome.value);
    }
    return outcome;
  }

  exportCluster(clusterId: string): Promise<Outcome<string>> {
    return this.exporting.send(async () => {
      const result = await firstValueFrom(this.apollo.query({ query: ExportInventoryDocument, variables: { clusterId }, fetchPolicy: 'no-cache' }));
      return { value: result.data?.exportInventory, error: result.error };
    });
  }

  /** Forgets the plan (the file was edited: it plans again). */
  clear(): void {
    this.planState.set(null);
    this.appliedState.set(null);
    this.planning.clear();
    this.applying.clear();
  }
}

import type { RemovalRunStore } from '@ccos/api/data-access-db';

/** Removal counts read from Postgres at scrape time: every replica answers the same. */
export class RemovalGauges {
  constructor(private readonly runs: RemovalRunStore) {}

  /** Running removal runs by phase. */
  inProgressByPhase(): Promise<Array<{ phase: string; count: number }>> {
    return this.runs.runningByPhase();
  }
}

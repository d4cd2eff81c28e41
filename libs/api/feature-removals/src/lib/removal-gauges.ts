import type { DataSource } from 'typeorm';

/** Removal counts read from Postgres at scrape time: every replica answers the same. */
export class RemovalGauges {
  constructor(private readonly dataSource: DataSource) {}

  /** Running removal runs by phase. */
  async inProgressByPhase(): Promise<Array<{ phase: string; count: number }>> {
    const rows: Array<{ phase: string; count: string }> = await this.dataSource.query(
      `SELECT phase, count(*) AS count FROM removal_runs WHERE status = 'RUNNING' GROUP BY phase`,
    );
    return rows.map((row) => ({ phase: row.phase, count: Number(row.count) }));
  }
}

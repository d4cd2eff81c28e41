import type { DataSource, EntityTarget, Repository } from 'typeorm';
import type { RunColumns, RunEventColumns } from './entities/run-columns';
import { isUuid } from './node.store';
import { RunEventLog, type RunEventFields } from './run-event-log';

/**
 * What the stores of runs share (install runs, removal runs): reading a run by its id or its
 * node, deleting one that never started, and its ordered {@link RunEventLog}. Each kind's store
 * adds the changes its runs go through.
 */
export abstract class RunStore<Run extends RunColumns<string>, Event extends RunEventColumns, NewEvent extends Partial<RunEventFields<Event>>> {
  protected readonly runs: Repository<Run>;

  /** The runs' events, in order. */
  readonly events: RunEventLog<Event, NewEvent>;

  protected constructor(dataSource: DataSource, run: EntityTarget<Run>, event: EntityTarget<Event>) {
    this.runs = dataSource.getRepository(run);
    this.events = new RunEventLog(dataSource, event);
  }

  /** The run, or null (also for an id that is no UUID). */
  find(id: string): Promise<Run | null> {
    return isUuid(id) ? this.byId(id).getOne() : Promise.resolve(null);
  }

  /** The run, which must exist (its id came from the store). */
  get(id: string): Promise<Run> {
    return this.byId(id).getOneOrFail();
  }

  /** Every run of the node, oldest first. */
  ofNode(nodeId: string): Promise<Run[]> {
    return this.ofNodeQuery(nodeId).orderBy('run.startedAt', 'ASC').getMany();
  }

  /** The node's latest run, or null. */
  latestOf(nodeId: string): Promise<Run | null> {
    return this.ofNodeQuery(nodeId).orderBy('run.startedAt', 'DESC').limit(1).getOne();
  }

  /** Deletes a run that never started (its node could not be moved). */
  async delete(id: string): Promise<void> {
    await this.runs.createQueryBuilder().delete().where('id = :id', { id }).execute();
  }

  private byId(id: string) {
    return this.runs.createQueryBuilder('run').where('run.id = :id', { id });
  }

  private ofNodeQuery(nodeId: string) {
    return this.runs.createQueryBuilder('run').where('run.nodeId = :nodeId', { nodeId });
  }
}

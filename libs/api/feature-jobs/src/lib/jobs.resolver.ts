import { Arg, Authorized, ID, Mutation, Query, Resolver } from 'type-graphql';
import type { FailedJob } from '@ccos/api/data-access-db';
import { NotFoundError } from '@ccos/shared/domain';
import { scrubSecrets } from '@ccos/shared/util-redaction';
import { FailedJobType } from './failed-job.type';

/** The dead letters of the durable jobs (data-access-db's JobEngine), and their retry. */
export interface FailedJobs {
  failedJobs(): Promise<FailedJob[]>;
  retry(jobId: string): Promise<boolean>;
}

@Resolver()
export class JobsResolver {
  constructor(private readonly jobs: FailedJobs) {}

  @Authorized('ADMIN')
  @Query(() => [FailedJobType], { description: 'Jobs that used up their attempts, the latest failure first (at most 200).' })
  async failedJobs(): Promise<FailedJobType[]> {
    return (await this.jobs.failedJobs()).map(toFailedJobType);
  }

  @Authorized('ADMIN')
  @Mutation(() => Boolean, { description: 'Gives a failed job its attempts again and runs it now.' })
  async retryJob(@Arg('id', () => ID) id: string): Promise<boolean> {
    if (!(await this.jobs.retry(id))) {
      throw new NotFoundError('failed job', id);
    }
    return true;
  }
}

function toFailedJobType(job: FailedJob): FailedJobType {
  const payload = job.payload as { nodeId?: unknown; clusterId?: unknown; hostname?: unknown } | null;
  return {
    ...job,
    nodeName: typeof payload?.hostname === 'string' ? payload.hostname : null,
    nodeId: typeof payload?.nodeId === 'string' ? payload.nodeId : null,
    clusterId: typeof payload?.clusterId === 'string' ? payload.clusterId : null,
    lastError: job.lastError === null ? null : scrubSecrets(job.lastError),
  };
}

import { Field, GraphQLISODateTime, ID, Int, ObjectType } from 'type-graphql';

@ObjectType('FailedJob', { description: 'A durable job that used up its attempts: it stays, not run again, until an ADMIN retries it.' })
export class FailedJobType {
  @Field(() => ID)
  id!: string;

  @Field(() => String, { description: 'What the job does, e.g. `node.provision` (connect to a host, check it, copy the agent).' })
  task!: string;

  @Field(() => String, { nullable: true, description: 'The job\'s key: at most one job waits under it.' })
  key!: string | null;

  @Field(() => String, { nullable: true, description: 'The queue whose jobs run one at a time, e.g. `host:<address>` for one host\'s jobs.' })
  queue!: string | null;

  @Field(() => ID, { nullable: true, description: 'The node the job works on, when it works on one.' })
  nodeId!: string | null;

  @Field(() => String, { nullable: true, description: 'That node\'s host name when the job was queued.' })
  nodeName!: string | null;

  @Field(() => ID, { nullable: true, description: 'The cluster of that node.' })
  clusterId!: string | null;

  @Field(() => Int)
  attempts!: number;

  @Field(() => Int)
  maxAttempts!: number;

  @Field(() => String, { nullable: true, description: 'Why its last attempt failed, as the failing component said it (secrets scrubbed).' })
  lastError!: string | null;

  @Field(() => GraphQLISODateTime)
  createdAt!: Date;

  @Field(() => GraphQLISODateTime, { description: 'When its last attempt failed.' })
  failedAt!: Date;
}

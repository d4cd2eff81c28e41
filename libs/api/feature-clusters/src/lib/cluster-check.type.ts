import { Field, ObjectType } from 'type-graphql';
import { MessageCodeField, MessageParamsField } from '@ccos/api/util-graphql';

/** One thing a cluster needs before nodes can be installed there, and whether it has it. */
@ObjectType('ClusterCheck', { description: 'One readiness check of a cluster, asked of its API server as the service.' })
export class ClusterCheckType {
  @Field(() => String, { description: 'Stable code: API_ACCESS, BOOTSTRAP_NAMESPACE, SERVICE_PERMISSIONS or RUN_IDENTITIES_FILE_CSRS.' })
  name!: string;

  @Field(() => Boolean)
  ok!: boolean;

  @Field(() => String, { description: 'What the check found, in English.' })
  reason!: string;

  @MessageCodeField('reason')
  reasonCode!: string | null;

  @MessageParamsField('reason')
  reasonParams!: Record<string, unknown> | null;

  @Field(() => String, { nullable: true, description: 'What fixes it, exactly: a manifest for `kubectl apply -f -`, or a command. Null when the check passed or no manifest or command can fix it.' })
  fix!: string | null;
}

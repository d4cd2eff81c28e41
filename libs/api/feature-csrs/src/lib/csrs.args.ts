import { ArgsType, Field, ID } from 'type-graphql';

@ArgsType()
export class CsrsArgs {
  @Field(() => ID)
  clusterId!: string;

  @Field(() => Boolean, { defaultValue: false, description: 'Only CSRs waiting for a decision.' })
  pendingOnly!: boolean;
}

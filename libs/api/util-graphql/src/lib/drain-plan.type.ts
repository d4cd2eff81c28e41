import { Field, Int, ObjectType } from 'type-graphql';
import type { Message } from '@ccos/shared/messages';
import { type CodedFields, MessageCodeField, MessageParamsField, codedFields } from './message-code-fields';

/** What a drain of a node would do (data-access-kube's `DrainPlan`, the parts shown), as the removal preview and the rollout preview show it. */
export interface DrainPlanShown {
  readonly pods: ReadonlyArray<{ readonly action: 'evict' | 'skip' | 'refuse' }>;
  readonly refusals: readonly string[];
  readonly refusalsCoded: readonly Message[];
  readonly budgets: ReadonlyArray<{ readonly namespace: string; readonly name: string; readonly disruptionsAllowed: number; readonly currentHealthy: number; readonly desiredHealthy: number; readonly pods: readonly string[] }>;
}

@ObjectType('KubectlLine', { description: "One of kubectl's warning or refusal lines, with its message code." })
export class KubectlLineType {
  @Field(() => String)
  message!: string;

  @MessageCodeField('message')
  messageCode!: string | null;

  @MessageParamsField('message')
  messageParams!: Record<string, unknown> | null;
}

@ObjectType('DrainPodCounts')
export class DrainPodCountsType {
  @Field(() => Int)
  evict!: number;

  @Field(() => Int)
  skip!: number;

  @Field(() => Int)
  refuse!: number;
}

@ObjectType('DisruptionBudgetPreview', { description: 'A PodDisruptionBudget covering pods the drain would evict.' })
export class DisruptionBudgetPreviewType {
  @Field(() => String)
  namespace!: string;

  @Field(() => String)
  name!: string;

  @Field(() => Int)
  disruptionsAllowed!: number;

  @Field(() => Int)
  currentHealthy!: number;

  @Field(() => Int)
  desiredHealthy!: number;

  @Field(() => [String], { description: 'namespace/name of the covered pods on this node.' })
  pods!: string[];

  @Field(() => Boolean, { description: 'It allows fewer disruptions than it covers pods here: the drain will wait for it (reported live as POD_BLOCKED).' })
  blocks!: boolean;
}

/** One of kubectl's lines with its code. */
export function kubectlLine(text: string, coded: Message | undefined): { message: string } & CodedFields<'message'> {
  return { message: text, ...codedFields('message', coded) };
}

/** A drain plan's pod counts, refusal lines and the budgets it meets (each marked when it allows fewer disruptions than it covers pods). */
export function drainPlanSummary(plan: DrainPlanShown): { counts: DrainPodCountsType; refusalLines: KubectlLineType[]; budgets: DisruptionBudgetPreviewType[] } {
  const count = (action: 'evict' | 'skip' | 'refuse') => plan.pods.filter((pod) => pod.action === action).length;
  return {
    counts: { evict: count('evict'), skip: count('skip'), refuse: count('refuse') },
    refusalLines: plan.refusals.map((line, index) => kubectlLine(line, plan.refusalsCoded[index])),
    budgets: plan.budgets.map((budget) => ({ ...budget, pods: [...budget.pods], blocks: budget.disruptionsAllowed < budget.pods.length })),
  };
}

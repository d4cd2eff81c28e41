import { MaxLength } from 'class-validator';
import { Field, Float, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import { enumOf, LabelType, MessageCodeField, MessageParamsField, NodeStatusEnum, SshSecretsInput, Satisfies, TaintType, codedFields, type CodedFields } from '@ccos/api/util-graphql';
import { checkHostname, type NodeStatus } from '@ccos/shared/domain';
import type { CodedText, MessageParams } from '@ccos/shared/messages';
import type { InventoryCredentialRef } from './inventory-document';
import type { InventoryChange } from './inventory-plan';
import type { PlannedInventory, RemovalSummary } from './inventory.service';

export const InventoryChangeKindEnum = enumOf(['CREATE_POOL', 'ADD', 'ADD_SPARE', 'INSTALL', 'RELABEL', 'REMOVE', 'FORGET'] as const);
registerEnumType(InventoryChangeKindEnum, {
  name: 'InventoryChangeKind',
  description: 'CREATE_POOL: create the node group (ADMIN). ADD_SPARE: enter the host as a spare of its pool (installed when the pool scales up). ADD: enter the host and install it. INSTALL: install a host whose record waits for it. RELABEL: set the labels and taints this service manages. REMOVE: take the member out (cordon, PodDisruptionBudget-safe drain, delete, clean the host). FORGET: delete the record of a host that never joined.',
});

@ObjectType('InventoryText', { simpleResolvers: true, description: 'A text of the plan, with its message code for clients in other languages.' })
export class InventoryTextType {
  @Field(() => String)
  message!: string;

  @MessageCodeField('message')
  messageCode!: string | null;

  @MessageParamsField('message')
  messageParams!: MessageParams | null;
}

@ObjectType('InventoryRemoval', { simpleResolvers: true, description: 'What removing the node would do now (removalPreview has the pods one by one).' })
export class InventoryRemovalType {
  @Field(() => Boolean)
  allowed!: boolean;

  @Field(() => InventoryTextType, { nullable: true, description: 'Why the removal would be refused.' })
  refusal!: InventoryTextType | null;

  @Field(() => Int, { description: 'Pods the drain would evict.' })
  evict!: number;

  @Field(() => Int, { description: 'Pods the drain leaves (DaemonSet pods, mirror pods).' })
  skip!: number;

  @Field(() => Int, { description: 'Pods that would stop the drain.' })
  refuse!: number;
}

@ObjectType('InventoryCredentialRef', { simpleResolvers: true, description: 'Where the file says the applying machine reads a host\'s SSH secret (never the secret).' })
export class InventoryCredentialRefType {
  @Field(() => String, { nullable: true })
  passwordFile!: string | null;

  @Field(() => String, { nullable: true })
  passwordEnv!: string | null;

  @Field(() => String, { nullable: true })
  privateKeyFile!: string | null;

  @Field(() => String, { nullable: true })
  privateKeyEnv!: string | null;

  @Field(() => String, { nullable: true })
  passphraseFile!: string | null;

  @Field(() => String, { nullable: true })
  passphraseEnv!: string | null;
}

@ObjectType('InventoryPool', { simpleResolvers: true, description: 'A pool (node group) as the file defines it.' })
export class InventoryPoolType {
  @Field(() => String)
  name!: string;

  @Field(() => Int)
  minSize!: number;

  @Field(() => Int)
  maxSize!: number;

  @Field(() => Float)
  cpuCores!: number;

  @Field(() => Float, { description: 'Bytes.' })
  memoryBytes!: number;

  @Field(() => Int)
  maxPods!: number;

  @Field(() => String)
  arch!: string;
}

@ObjectType('InventoryChange', { simpleResolvers: true })
export class InventoryChangeType {
  @Field(() => InventoryChangeKindEnum)
  kind!: InventoryChange['kind'];

  @Field(() => String, { nullable: true, description: 'The host; null for CREATE_POOL.' })
  hostname!: string | null;

  @Field(() => String, { nullable: true, description: 'The pool created (CREATE_POOL) or joined as a spare (ADD_SPARE).' })
  pool!: string | null;

  @Field(() => InventoryPoolType, { nullable: true, description: 'The pool to create (CREATE_POOL); its labels and taints are the change\'s.' })
  poolDefinition!: InventoryPoolType | null;

  @Field(() => ID, { nullable: true, description: 'The node\'s record; null for a host to add.' })
  nodeId!: string | null;

  @Field(() => String, { nullable: true, description: 'The address of a host to add.' })
  ip!: string | null;

  @Field(() => InventoryCredentialRefType, { nullable: true, description: 'Where applyInventory\'s caller reads the SSH secret of a host to add (ADD).' })
  credential!: InventoryCredentialRefType | null;

  @Field(() => [LabelType], { description: 'The labels the node gets (ADD, RELABEL).' })
  labels!: LabelType[];

  @Field(() => [TaintType])
  taints!: TaintType[];

  @Field(() => [LabelType], { description: 'The labels this service had given it (RELABEL).' })
  labelsBefore!: LabelType[];

  @Field(() => [TaintType])
  taintsBefore!: TaintType[];

  @Field(() => InventoryRemovalType, { nullable: true })
  removal!: InventoryRemovalType | null;
}

@ObjectType('InventoryAttention', { simpleResolvers: true, description: 'A host the file names whose state needs an operator, not apply (a failed install, a changed host key).' })
export class InventoryAttentionType {
  @Field(() => String)
  hostname!: string;

  @Field(() => ID)
  nodeId!: string;

  @Field(() => NodeStatusEnum)
  status!: NodeStatus;
}

@ObjectType('InventoryPlan', { simpleResolvers: true })
export class InventoryPlanType {
  @Field(() => ID)
  clusterId!: string;

  @Field(() => String)
  clusterName!: string;

  @Field(() => [InventoryChangeType])
  changes!: InventoryChangeType[];

  @Field(() => [InventoryTextType], { description: 'Why the plan cannot be applied as it stands; applyInventory refuses while any is left.' })
  conflicts!: InventoryTextType[];

  @Field(() => [InventoryAttentionType])
  attention!: InventoryAttentionType[];

  @Field(() => Int, { description: 'Hosts the file names that are already as it says.' })
  unchanged!: number;

  @Field(() => String, { description: 'The state of the named nodes this plan was made from: pass it to applyInventory, which refuses if they changed since.' })
  fingerprint!: string;
}

@ObjectType('InventoryApplyResult', { simpleResolvers: true })
export class InventoryApplyResultType {
  @Field(() => InventoryPlanType, { description: 'The plan that was applied.' })
  plan!: InventoryPlanType;

  @Field(() => ID, { nullable: true, description: 'The batch installing the added hosts (nodeBatch, batchChanged); null when none are added.' })
  batchId!: string | null;

  @Field(() => [ID], { description: 'The removal runs started (removalRun, removalProgress).' })
  removalRunIds!: string[];
}

@InputType({ description: 'The SSH secret of a host the file adds, read by the applying machine from where the file names it. Write-only.' })
export class InventoryCredentialInput extends SshSecretsInput {
  @Field(() => String)
  @MaxLength(253)
  @Satisfies(checkHostname)
  hostname!: string;
}

/** The labels and taints a change gives: an added host's, a relabel's new ones, a new pool's. */
function marksOf(change: InventoryChange): { labels: readonly LabelType[]; taints: ReadonlyArray<{ key: string; value?: string | null; effect: TaintType['effect'] }> } {
  switch (change.kind) {
    case 'ADD':
      return change.host;
    case 'RELABEL':
      return change.marks.to;
    case 'CREATE_POOL':
      return change.pool;
    default:
      return { labels: [], taints: [] };
  }
}

function taintTypes(taints: ReturnType<typeof marksOf>['taints']): TaintType[] {
  return taints.map((taint) => ({ ...taint, value: taint.value ?? null }));
}

function credentialRefOf(ref: InventoryCredentialRef): InventoryCredentialRefType {
  return {
    passwordFile: ref.passwordFile ?? null,
    passwordEnv: ref.passwordEnv ?? null,
    privateKeyFile: ref.privateKeyFile ?? null,
    privateKeyEnv: ref.privateKeyEnv ?? null,
    passphraseFile: ref.passphraseFile ?? null,
    passphraseEnv: ref.passphraseEnv ?? null,
  };
}

function textOf(text: CodedText): InventoryTextType {
  return { message: text.message, ...(codedFields('message', text) as CodedFields<'message'>) };
}

function removalOf(summary: RemovalSummary | undefined): InventoryRemovalType | null {
  return summary ? { allowed: summary.allowed, refusal: summary.refusal ? textOf(summary.refusal) : null, evict: summary.evict, skip: summary.skip, refuse: summary.refuse } : null;
}

export function toInventoryPlanType({ cluster, plan, removals }: PlannedInventory): InventoryPlanType {
  return {
    clusterId: cluster.id,
    clusterName: cluster.name,
    changes: plan.changes.map((change): InventoryChangeType => {
      const marks = marksOf(change);
      return {
        kind: change.kind,
        hostname: change.hostname,
        pool: change.kind === 'CREATE_POOL' ? change.pool.name : change.kind === 'ADD_SPARE' ? change.pool : null,
        poolDefinition: change.kind === 'CREATE_POOL' ? { name: change.pool.name, minSize: change.pool.minSize, maxSize: change.pool.maxSize, ...change.pool.profile } : null,
        nodeId: 'nodeId' in change ? change.nodeId : null,
        ip: 'host' in change ? change.host.ip : null,
        credential: 'host' in change && change.host.credential ? credentialRefOf(change.host.credential) : null,
        labels: [...marks.labels],
        taints: taintTypes(marks.taints),
        labelsBefore: change.kind === 'RELABEL' ? [...change.marks.from.labels] : [],
        taintsBefore: change.kind === 'RELABEL' ? taintTypes(change.marks.from.taints) : [],
        removal: change.kind === 'REMOVE' ? removalOf(removals.get(change.nodeId)) : null,
      };
    }),
    conflicts: plan.conflicts.map(textOf),
    attention: plan.attention.map((entry) => ({ ...entry })),
    unchanged: plan.unchanged,
    fingerprint: plan.fingerprint,
  };
}

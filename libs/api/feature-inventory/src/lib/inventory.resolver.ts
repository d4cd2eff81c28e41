import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { MultiLine, type RequestContext, Secret } from '@ccos/api/util-graphql';
import { BadUserInputError } from '@ccos/shared/domain';
import { message } from '@ccos/shared/messages';
import type { InventoryService } from './inventory.service';
import { InventoryApplyResultType, InventoryCredentialInput, InventoryPlanType, toInventoryPlanType } from './inventory.type';

/** The largest inventory file: about 5,000 hosts with labels. */
export const MAX_INVENTORY_BYTES = 1024 * 1024;
const DOCUMENT = { description: 'The inventory file (YAML or JSON; docs/inventory.schema.json).' };

@Resolver()
export class InventoryResolver {
  constructor(private readonly inventory: InventoryService) {}

  @Authorized('OPERATOR')
  @Query(() => InventoryPlanType, { description: 'What applying the inventory file would change in its cluster. Changes nothing; a file with problems is refused with every problem named.' })
  async planInventory(@Arg('document', () => String, DOCUMENT) @MultiLine() document: string): Promise<InventoryPlanType> {
    return toInventoryPlanType(await this.inventory.plan(checkedDocument(document)));
  }

  @Authorized('OPERATOR')
  @Mutation(() => InventoryApplyResultType, {
    description:
      'Applies the inventory file through the paths addNode, installBatch, setNodeLabels and removeNode take, if the nodes it names are as they were when the plan with this fingerprint was made (CONFLICT otherwise: plan again). Hosts to add need their credentials here.',
  })
  async applyInventory(
    // Kept out of the audit entry like a secret: a file refused for an inline password would otherwise leave it there.
    @Arg('document', () => String, DOCUMENT) @MultiLine() @Secret() document: string,
    @Arg('fingerprint', () => String, { description: 'planInventory\'s fingerprint.' }) fingerprint: string,
    @Arg('credentials', () => [InventoryCredentialInput], { defaultValue: [] }) credentials: InventoryCredentialInput[],
    @Ctx() context: RequestContext,
  ): Promise<InventoryApplyResultType> {
    const actor = context.user?.username ?? 'unknown';
    const applied = await this.inventory.apply(checkedDocument(document), fingerprint, credentials, actor, { role: context.user?.role ?? 'VIEWER' });
    return { plan: toInventoryPlanType(applied), batchId: applied.batchId, removalRunIds: [...applied.removalRunIds] };
  }

  @Authorized('VIEWER')
  @Query(() => String, { description: 'The hosts this service added to the cluster and has not removed, as an inventory file that plans to no change (credentials are not exported).' })
  async exportInventory(@Arg('clusterId', () => ID) clusterId: string): Promise<string> {
    return this.inventory.export(clusterId);
  }
}

function checkedDocument(document: string): string {
  if (Buffer.byteLength(document) > MAX_INVENTORY_BYTES) {
    throw new BadUserInputError('document', message('validation.tooLarge', { kib: MAX_INVENTORY_BYTES / 1024 }));
  }
  return document;
}

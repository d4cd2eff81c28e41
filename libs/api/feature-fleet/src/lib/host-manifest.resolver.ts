import { Arg, Authorized, ID, Mutation, Query, Resolver } from 'type-graphql';
import type { HostInspector } from './host-inspector';
import { HostManifestType, toHostManifestType } from './host-manifest.type';

@Resolver()
export class HostManifestResolver {
  constructor(private readonly inspector: HostInspector) {}

  @Authorized('VIEWER')
  @Query(() => HostManifestType, { nullable: true, description: 'What the node\'s host runs by its last successful install (every file the agent wrote, with its SHA-256), and what the last inspection found; null when no install recorded it.' })
  async hostManifest(@Arg('nodeId', () => ID) nodeId: string): Promise<HostManifestType | null> {
    const view = await this.inspector.view(nodeId);
    return view ? toHostManifestType(view) : null;
  }

  @Authorized('OPERATOR')
  @Mutation(() => HostManifestType, { description: 'Hashes every recorded file on the node\'s host now (one command over SSH) and answers what differs. A host that cannot be reached is answered with inspectionProblem, not an error.' })
  async inspectNode(@Arg('nodeId', () => ID) nodeId: string): Promise<HostManifestType> {
    return toHostManifestType(await this.inspector.inspect(nodeId));
  }
}

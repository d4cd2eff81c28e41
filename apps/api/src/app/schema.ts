import {
  type GraphQLArgument,
  type GraphQLInputField,
  type GraphQLNamedType,
  type GraphQLSchema,
  type NameNode,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
  lexicographicSortSchema,
  parse,
  printSchema,
  specifiedDirectives,
  visit,
} from 'graphql';
import { buildSchema, type ContainerType } from 'type-graphql';
import type { AuditLog } from '@ccos/api/data-access-db';
import { AuditLogResolver, AuthResolver, SessionResolver, type SessionService, UserResolver, type UserService } from '@ccos/api/feature-auth';
import { ArtifactSetResolver, type ArtifactVersionOverrides, type ClusterArtifacts } from '@ccos/api/feature-artifacts';
import { ClusterResolver, type ClusterService } from '@ccos/api/feature-clusters';
import { CsrResolver, type CsrService, type NodeCertificatesService } from '@ccos/api/feature-csrs';
import {
  AgentChannelResolver,
  type AgentChannelSettings,
  AgentResolver,
  type AgentReportService,
  InstallResolver,
  type InstallRunView,
  type InstallService,
  HostCleanupResolver,
  type HostCleanupService,
  NodeBatchResolver,
  type NodeBatchService,
  NodeResolver,
  type NodeService,
} from '@ccos/api/feature-nodes';
import { RemovalResolver, type RemovalService } from '@ccos/api/feature-removals';
import { type AutoscalerConnections, NodeGroupResolver, type NodeGroupService } from '@ccos/api/feature-autoscaling';
import {
  type EventBus,
  INPUT_MARK_DIRECTIVES,
  allowsLineBreaks,
  createAuditMiddleware,
  createAuthChecker,
  createInputGuard,
  isSecretInput,
  validateArguments,
} from '@ccos/api/util-graphql';

/** The services resolvers are built from (the composition root creates them once). */
export interface ApiServices {
  readonly users: UserService;
  readonly sessions: SessionService;
  readonly clusters: ClusterService;
  readonly csrs: CsrService;
  readonly nodeCertificates: NodeCertificatesService;
  readonly nodes: NodeService;
  readonly batches: NodeBatchService;
  readonly hostCleanup: HostCleanupService;
  readonly installs: InstallService;
  readonly installRunView: InstallRunView;
  readonly agentReports: AgentReportService;
  readonly removals: RemovalService;
  readonly clusterArtifacts: ClusterArtifacts;
  readonly artifactVersionOverrides: ArtifactVersionOverrides;
  readonly nodeGroups: NodeGroupService;
  readonly autoscalerConnections: AutoscalerConnections;
  readonly audit: AuditLog;
  readonly events: EventBus;
  readonly agentChannel: AgentChannelSettings;
}

/**
 * Builds the GraphQL schema. Resolvers get their services through constructors; the
 * container hands type-graphql those instances instead of constructing classes itself.
 */
export async function buildApiSchema(services: ApiServices): Promise<GraphQLSchema> {
  const instances = new Map<unknown, object>([
    [AuthResolver, new AuthResolver(services.users)],
    [UserResolver, new UserResolver(services.users)],
    [SessionResolver, new SessionResolver(services.users, services.sessions)],
    [AuditLogResolver, new AuditLogResolver(services.audit)],
    [ClusterResolver, new ClusterResolver(services.clusters)],
    [CsrResolver, new CsrResolver(services.csrs, services.nodeCertificates)],
    [NodeResolver, new NodeResolver(services.nodes)],
    [NodeBatchResolver, new NodeBatchResolver(services.batches)],
    [HostCleanupResolver, new HostCleanupResolver(services.hostCleanup)],
    [InstallResolver, new InstallResolver(services.installs, services.installRunView)],
    [AgentResolver, new AgentResolver(services.agentReports)],
    [AgentChannelResolver, new AgentChannelResolver(services.agentChannel)],
    [RemovalResolver, new RemovalResolver(services.removals)],
    [ArtifactSetResolver, new ArtifactSetResolver(services.clusterArtifacts, services.artifactVersionOverrides)],
    [NodeGroupResolver, new NodeGroupResolver(services.nodeGroups, services.autoscalerConnections)],
  ]);
  const container: ContainerType = {
    get(someClass) {
      const instance = instances.get(someClass);
      if (!instance) {
        throw new Error(`no instance registered for ${String((someClass as { name?: string }).name)}`);
      }
      return instance;
    },
  };
  return buildSchema({
    resolvers: [AuthResolver, UserResolver, SessionResolver, AuditLogResolver, ClusterResolver, CsrResolver, NodeResolver, NodeBatchResolver, HostCleanupResolver, InstallResolver, AgentResolver, AgentChannelResolver, RemovalResolver, ArtifactSetResolver, NodeGroupResolver],
    container,
    authChecker: createAuthChecker(services.audit),
    validateFn: validateArguments,
    // The audit entry first, so that input the guard refuses is recorded as refused.
    globalMiddlewares: [createAuditMiddleware(services.audit), createInputGuard()],
    directives: [...specifiedDirectives, ...INPUT_MARK_DIRECTIVES],
    pubSub: services.events,
  });
}

/**
 * The schema as committed in libs/shared/api-schema/schema.graphql (sorted, so diffs stay readable),
 * with the `@secret` and `@multiline` marks of arguments and input fields, which graphql's printer
 * leaves out: each is written right after the definition it marks.
 */
export function printApiSchema(schema: GraphQLSchema): string {
  const sorted = lexicographicSortSchema(schema);
  const printed = printSchema(sorted);
  const insertions: Array<{ readonly at: number; readonly text: string }> = [];
  let owner: GraphQLNamedType | undefined;
  let field: string | undefined;
  const enterType = { enter: (node: { readonly name: NameNode }) => void (owner = sorted.getType(node.name.value) ?? undefined), leave: () => void (owner = undefined) };
  visit(parse(printed), {
    ObjectTypeDefinition: enterType,
    InterfaceTypeDefinition: enterType,
    InputObjectTypeDefinition: enterType,
    FieldDefinition: { enter: (node) => void (field = node.name.value), leave: () => void (field = undefined) },
    InputValueDefinition(node) {
      const definition = markableDefinition(owner, field, node.name.value);
      const marks = definition ? `${isSecretInput(definition) ? ' @secret' : ''}${allowsLineBreaks(definition) ? ' @multiline' : ''}` : '';
      if (marks && node.loc) {
        insertions.push({ at: node.loc.end, text: marks });
      }
    },
  });
  let out = printed;
  for (const { at, text } of insertions.sort((a, b) => b.at - a.at)) {
    out = `${out.slice(0, at)}${text}${out.slice(at)}`;
  }
  return `${out}\n`;
}

function markableDefinition(owner: GraphQLNamedType | undefined, field: string | undefined, name: string): GraphQLArgument | GraphQLInputField | undefined {
  if (isInputObjectType(owner)) {
    return owner.getFields()[name];
  }
  if ((isObjectType(owner) || isInterfaceType(owner)) && field) {
    return owner.getFields()[field]?.args.find((arg) => arg.name === name);
  }
  return undefined;
}

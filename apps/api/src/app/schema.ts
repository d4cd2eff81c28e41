import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
import { buildSchema, type ContainerType } from 'type-graphql';
import type { AuditLog } from '@ccos/api/data-access-db';
import { AuditLogResolver, AuthResolver, SessionResolver, type SessionService, UserResolver, type UserService } from '@ccos/api/feature-auth';
import { ClusterResolver, type ClusterService } from '@ccos/api/feature-clusters';
import { CsrResolver, type CsrService } from '@ccos/api/feature-csrs';
import {
  AgentChannelResolver,
  type AgentChannelSettings,
  AgentResolver,
  type AgentReportService,
  InstallResolver,
  type InstallRunView,
  type InstallService,
  NodeResolver,
  type NodeService,
} from '@ccos/api/feature-nodes';
import { RemovalResolver, type RemovalService } from '@ccos/api/feature-removals';
import { type EventBus, createAuditMiddleware, createAuthChecker, validateArguments } from '@ccos/api/util-graphql';

/** The services resolvers are built from (the composition root creates them once). */
export interface ApiServices {
  readonly users: UserService;
  readonly sessions: SessionService;
  readonly clusters: ClusterService;
  readonly csrs: CsrService;
  readonly nodes: NodeService;
  readonly installs: InstallService;
  readonly installRunView: InstallRunView;
  readonly agentReports: AgentReportService;
  readonly removals: RemovalService;
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
    [CsrResolver, new CsrResolver(services.csrs)],
    [NodeResolver, new NodeResolver(services.nodes)],
    [InstallResolver, new InstallResolver(services.installs, services.installRunView)],
    [AgentResolver, new AgentResolver(services.agentReports)],
    [AgentChannelResolver, new AgentChannelResolver(services.agentChannel)],
    [RemovalResolver, new RemovalResolver(services.removals)],
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
    resolvers: [AuthResolver, UserResolver, SessionResolver, AuditLogResolver, ClusterResolver, CsrResolver, NodeResolver, InstallResolver, AgentResolver, AgentChannelResolver, RemovalResolver],
    container,
    authChecker: createAuthChecker(services.audit),
    validateFn: validateArguments,
    globalMiddlewares: [createAuditMiddleware(services.audit)],
    pubSub: services.events,
  });
}

/** The schema as committed in libs/shared/api-schema/schema.graphql (sorted, so diffs stay readable). */
export function printApiSchema(schema: GraphQLSchema): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}

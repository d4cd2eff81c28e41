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
import { type BuildSchemaOptions, buildSchema, type ContainerType } from 'type-graphql';
import type { AuditLog } from '@ccos/api/data-access-db';
import { ApprovalResolver, type ApprovalService } from '@ccos/api/feature-approvals';
import { type ArtifactsFeature, ArtifactSetResolver } from '@ccos/api/feature-artifacts';
import { AuditLogResolver, type AuthFeature, AuthResolver, SessionResolver, UserResolver } from '@ccos/api/feature-auth';
import { type AutoscalerConnections, type AutoscalingFeature, NodeGroupResolver } from '@ccos/api/feature-autoscaling';
import { ClusterCheckResolver, type ClusterFeature, ClusterResolver } from '@ccos/api/feature-clusters';
import { type CsrFeature, CsrResolver } from '@ccos/api/feature-csrs';
import { type FleetFeature, HostManifestResolver, RolloutResolver } from '@ccos/api/feature-fleet';
import { AgentChannelResolver, AgentResolver, type InstallFeature, InstallResolver, InstallRunResolver } from '@ccos/api/feature-installs';
import { type InventoryFeature, InventoryResolver } from '@ccos/api/feature-inventory';
import { type FailedJobs, JobsResolver } from '@ccos/api/feature-jobs';
import { HostCleanupResolver, NodeBatchResolver, type NodeFeature, NodeResolver } from '@ccos/api/feature-nodes';
import { RemediationResolver } from '@ccos/api/feature-remediation';
import { type RemovalFeature, RemovalResolver } from '@ccos/api/feature-removals';
import { WebhookResolver, type WebhooksFeature } from '@ccos/api/feature-webhooks';
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

/** The features resolvers are built from (the composition root creates them once). */
export interface ApiServices {
  readonly auth: Pick<AuthFeature, 'users' | 'sessions'>;
  readonly clusters: Pick<ClusterFeature, 'service' | 'checks'>;
  readonly certificates: Pick<CsrFeature, 'service' | 'nodeCertificates'>;
  readonly nodes: Pick<NodeFeature, 'service' | 'views' | 'batches' | 'hostCleanup' | 'provisioner'>;
  readonly installs: Pick<InstallFeature, 'service' | 'runView' | 'runs' | 'agentReports' | 'agentChannel'>;
  readonly removals: Pick<RemovalFeature, 'service'>;
  readonly artifacts: Pick<ArtifactsFeature, 'clusters' | 'versionOverrides'>;
  readonly autoscaling: Pick<AutoscalingFeature, 'groups'>;
  /** The externalgrpc provider's endpoint and client certificates, for the node group views. */
  readonly autoscalerConnections: AutoscalerConnections;
  readonly audit: AuditLog;
  readonly events: EventBus;
  /** The durable jobs' dead letters. */
  readonly jobs: FailedJobs;
  /** Remediation policies and holds (feature-remediation builds it with its remediator). */
  readonly remediation: RemediationResolver;
  /** What hosts run and their drift (feature-fleet builds its resolvers with its inspector). */
  readonly fleet: Pick<FleetFeature, 'resolver' | 'rolloutResolver'>;
  /** Plan, apply and export inventory files (feature-inventory builds its resolver with its service). */
  readonly inventory: Pick<InventoryFeature, 'resolver'>;
  /** Webhook endpoints and their deliveries (feature-webhooks builds its resolver with its service). */
  readonly webhooks: Pick<WebhooksFeature, 'resolver'>;
  /** Four-eyes: held actions and their decisions. */
  readonly approvals: ApprovalService;
}

/**
 * Builds the GraphQL schema. Resolvers get their services through constructors; the
 * container hands type-graphql those instances instead of constructing classes itself.
 */
export async function buildApiSchema(services: ApiServices): Promise<GraphQLSchema> {
  const { auth, clusters, certificates, nodes, installs, removals, artifacts, autoscaling } = services;
  // Every resolver once: its class for type-graphql, and the instance the container hands out for it.
  const resolvers: ReadonlyArray<readonly [BuildSchemaOptions['resolvers'][number], object]> = [
    [AuthResolver, new AuthResolver(auth.users)],
    [UserResolver, new UserResolver(auth.users)],
    [SessionResolver, new SessionResolver(auth.users, auth.sessions)],
    [AuditLogResolver, new AuditLogResolver(services.audit)],
    [ClusterResolver, new ClusterResolver(clusters.service)],
    [ClusterCheckResolver, new ClusterCheckResolver(clusters.checks)],
    [CsrResolver, new CsrResolver(certificates.service, certificates.nodeCertificates)],
    [NodeResolver, new NodeResolver(nodes.service, nodes.views, nodes.provisioner)],
    [NodeBatchResolver, new NodeBatchResolver(nodes.batches)],
    [HostCleanupResolver, new HostCleanupResolver(nodes.hostCleanup, nodes.views)],
    [InstallResolver, new InstallResolver(installs.service, installs.runView)],
    [InstallRunResolver, new InstallRunResolver(installs.runs)],
    [AgentResolver, new AgentResolver(installs.agentReports)],
    [AgentChannelResolver, new AgentChannelResolver(installs.agentChannel)],
    [RemovalResolver, new RemovalResolver(removals.service)],
    [ArtifactSetResolver, new ArtifactSetResolver(artifacts.clusters, artifacts.versionOverrides)],
    [NodeGroupResolver, new NodeGroupResolver(autoscaling.groups, services.autoscalerConnections)],
    [JobsResolver, new JobsResolver(services.jobs)],
    [RemediationResolver, services.remediation],
    [HostManifestResolver, services.fleet.resolver],
    [RolloutResolver, services.fleet.rolloutResolver],
    [InventoryResolver, services.inventory.resolver],
    [WebhookResolver, services.webhooks.resolver],
    [ApprovalResolver, new ApprovalResolver(services.approvals)],
  ];
  const instances = new Map<unknown, object>(resolvers);
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
    resolvers: resolvers.map(([type]) => type) as BuildSchemaOptions['resolvers'],
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

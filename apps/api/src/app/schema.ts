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
import { type ArtifactsFeature, ArtifactSetResolver } from '@ccos/api/feature-artifacts';
import { AuditLogResolver, type AuthFeature, AuthResolver, SessionResolver, UserResolver } from '@ccos/api/feature-auth';
import { type AutoscalerConnections, type AutoscalingFeature, NodeGroupResolver } from '@ccos/api/feature-autoscaling';
import { ClusterCheckResolver, type ClusterFeature, ClusterResolver } from '@ccos/api/feature-clusters';
import { type CsrFeature, CsrResolver } from '@ccos/api/feature-csrs';
import { AgentChannelResolver, AgentResolver, type InstallFeature, InstallResolver, InstallRunResolver } from '@ccos/api/feature-installs';
import { type FailedJobs, JobsResolver } from '@ccos/api/feature-jobs';
import { HostCleanupResolver, NodeBatchResolver, type NodeFeature, NodeResolver } from '@ccos/api/feature-nodes';
import type { RemediationResolver } from '@ccos/api/feature-remediation';
import { type RemovalFeature, RemovalResolver } from '@ccos/api/feature-removals';
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
  readonly nodes: Pick<NodeFeature, 'service' | 'batches' | 'hostCleanup'>;
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
}

/**
 * Builds the GraphQL schema. Resolvers get their services through constructors; the
 * container hands type-graphql those instances instead of constructing classes itself.
 */
export async function buildApiSchema(services: ApiServices): Promise<GraphQLSchema> {
  const { auth, clusters, certificates, nodes, installs, removals, artifacts, autoscaling } = services;
  // Every resolver once, as the instance the container hands type-graphql for its class.
  const resolvers: readonly object[] = [
    new AuthResolver(auth.users),
    new UserResolver(auth.users),
    new SessionResolver(auth.users, auth.sessions),
    new AuditLogResolver(services.audit),
    new ClusterResolver(clusters.service),
    new ClusterCheckResolver(clusters.checks),
    new CsrResolver(certificates.service, certificates.nodeCertificates),
    new NodeResolver(nodes.service),
    new NodeBatchResolver(nodes.batches),
    new HostCleanupResolver(nodes.hostCleanup),
    new InstallResolver(installs.service, installs.runView),
    new InstallRunResolver(installs.runs),
    new AgentResolver(installs.agentReports),
    new AgentChannelResolver(installs.agentChannel),
    new RemovalResolver(removals.service),
    new ArtifactSetResolver(artifacts.clusters, artifacts.versionOverrides),
    new NodeGroupResolver(autoscaling.groups, services.autoscalerConnections),
    new JobsResolver(services.jobs),
    services.remediation,
  ];
  const instances = new Map<unknown, object>(resolvers.map((resolver) => [resolver.constructor, resolver]));
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
    resolvers: resolvers.map((resolver) => resolver.constructor) as BuildSchemaOptions['resolvers'],
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

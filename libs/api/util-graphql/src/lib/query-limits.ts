import {
  type ArgumentNode,
  type ASTVisitor,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLSchema,
  GraphQLError,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
  type ValidationRule,
  Kind,
  getNamedType,
  getNullableType,
  isCompositeType,
  isListType,
  isObjectType,
  isInterfaceType,
  valueFromASTUntyped,
} from 'graphql';
import { CLIENT_CSR_CHECKS, SERVING_CSR_CHECKS } from '@ccos/shared/domain';
import { type CodedText, message } from '@ccos/shared/messages';

/** How big a document may be and how much work one operation may ask for. */
export interface QueryLimits {
  /** Tokens the parser reads before it gives up: a 20,000-field document is refused after this many. */
  readonly maxTokens: number;
  readonly maxDepth: number;
  readonly maxAliases: number;
  /** The most fields one operation may resolve, counting each list field as `first`/`limit` items. */
  readonly maxCost: number;
  /** How many items a list field without a size argument is counted as. */
  readonly assumedListSize: number;
  /** Lists the service itself keeps short, by `Type.field`: counted at their real bound instead. */
  readonly listBounds?: Readonly<Record<string, number>>;
}

const CHECKS_PER_VERDICT = Math.max(CLIENT_CSR_CHECKS.length, SERVING_CSR_CHECKS.length);

/**
 * The limits of the API, HTTP and WebSocket alike. The console's operation files have at most 415
 * tokens, and its costliest operation (Csrs: CSRs × decisions × checks) stays under half the cost
 * limit (query-limits.spec.ts), leaving room for other clients. A verdict has one entry per policy
 * check, and a CSR at most a "left pending" and an approval or denial (two operators at once make
 * it three). graphql's own overlap rule compares sibling fragments pairwise, so
 * the token limit is what bounds it: at 2,000 tokens the worst document bench/graphql-validation.ts
 * finds validates in tens of milliseconds.
 */
export const QUERY_LIMITS: QueryLimits = {
  maxTokens: 2000,
  maxDepth: 12,
  maxAliases: 64,
  maxCost: 50_000,
  assumedListSize: 20,
  listBounds: { 'CsrVerdict.checks': CHECKS_PER_VERDICT, 'CsrDecision.checks': CHECKS_PER_VERDICT, 'Csr.decisions': 3 },
};

function refusal(text: CodedText, node?: { readonly loc?: unknown }): GraphQLError {
  return new GraphQLError(text.message, {
    nodes: node ? [node as OperationDefinitionNode] : undefined,
    extensions: { code: 'BAD_USER_INPUT', messageCode: text.code, messageParams: text.params },
  });
}

/**
 * Refuses operations nested deeper than `maxDepth` (fragments followed). Each fragment's depth is
 * worked out once and remembered, so the work is linear in the document even when fragments
 * spread each other many times over.
 */
export function depthLimit(maxDepth: number): ValidationRule {
  return (context: ValidationContext): ASTVisitor => {
    const fragmentDepths = new Map<string, number>();
    const measuring = new Set<string>();
    const fragmentDepth = (name: string): number => {
      const known = fragmentDepths.get(name);
      if (known !== undefined) {
        return known;
      }
      const fragment = context.getFragment(name);
      // A cycle is NoFragmentCyclesRule's to report; here it adds nothing.
      if (!fragment || measuring.has(name)) {
        return 0;
      }
      measuring.add(name);
      const depth = depthOf(fragment.selectionSet);
      measuring.delete(name);
      fragmentDepths.set(name, depth);
      return depth;
    };
    const depthOf = (selectionSet: SelectionSetNode): number => {
      let deepest = 0;
      for (const selection of selectionSet.selections) {
        if (selection.kind === Kind.FIELD) {
          deepest = Math.max(deepest, 1 + (selection.selectionSet ? depthOf(selection.selectionSet) : 0));
        } else if (selection.kind === Kind.INLINE_FRAGMENT) {
          deepest = Math.max(deepest, depthOf(selection.selectionSet));
        } else {
          deepest = Math.max(deepest, fragmentDepth(selection.name.value));
        }
      }
      return deepest;
    };
    return {
      OperationDefinition(node) {
        const depth = depthOf(node.selectionSet);
        if (depth > maxDepth) {
          context.reportError(refusal(message('query.tooDeep', { depth, max: maxDepth }), node));
        }
      },
    };
  };
}

/** Refuses documents with more than `maxAliases` aliased fields (alias amplification). */
export function aliasLimit(maxAliases: number): ValidationRule {
  return (context) => {
    let aliases = 0;
    return {
      Field(node) {
        if (node.alias) {
          aliases += 1;
          if (aliases === maxAliases + 1) {
            context.reportError(refusal(message('query.tooManyAliases', { max: maxAliases }), node));
          }
        }
      },
    };
  };
}

/** The validation rules added to graphql's own, for every transport. */
export function queryLimitRules(limits: QueryLimits = QUERY_LIMITS): ValidationRule[] {
  return [depthLimit(limits.maxDepth), aliasLimit(limits.maxAliases)];
}

/** Argument names that say how many items a list field returns. */
const SIZE_ARGUMENTS = ['first', 'last', 'limit'];

/**
 * What an operation costs: every field but `__typename` counts 1, and what is selected under a list field counts
 * once per item. The item count is the list field's `first`/`last`/`limit` argument, or that of
 * the field just above it (`auditLog(first: 50) { entries { … } }`), variables included, and
 * `assumedListSize` otherwise. Each fragment is costed once and remembered, so this too is linear
 * in the document. The result is capped at `maxCost + 1`.
 */
export function operationCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Readonly<Record<string, unknown>> | undefined,
  limits: Pick<QueryLimits, 'maxCost' | 'assumedListSize' | 'listBounds'> = QUERY_LIMITS,
): number {
  const cap = limits.maxCost + 1;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) {
      fragments.set(definition.name.value, definition);
    }
  }
  const fragmentCosts = new Map<string, number>();
  const costing = new Set<string>();
  /** `size`: the item count a parent without a list type (`auditLog(first: 5)`) gives its lists. */
  const fragmentCost = (name: string, size: number | undefined): number => {
    const key = `${name}|${size ?? ''}`;
    const known = fragmentCosts.get(key);
    if (known !== undefined) {
      return known;
    }
    const fragment = fragments.get(name);
    const type = fragment ? schema.getType(fragment.typeCondition.name.value) : undefined;
    if (!fragment || !type || !isCompositeType(type) || costing.has(key)) {
      return 0;
    }
    costing.add(key);
    const cost = selectionCost(fragment.selectionSet, type, size);
    costing.delete(key);
    fragmentCosts.set(key, cost);
    return cost;
  };
  const selectionCost = (selectionSet: SelectionSetNode, parent: GraphQLCompositeType, size: number | undefined): number => {
    let total = 0;
    // graphql runs a fragment spread twice in one selection set only once.
    const spread = new Set<string>();
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FRAGMENT_SPREAD) {
        if (!spread.has(selection.name.value)) {
          spread.add(selection.name.value);
          total += fragmentCost(selection.name.value, size);
        }
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const type = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : parent;
        total += type && isCompositeType(type) ? selectionCost(selection.selectionSet, type, size) : 0;
      } else if (selection.name.value === '__typename') {
        // Answered from the parent's type without a resolver; clients add it to every selection set.
        continue;
      } else {
        const field = isObjectType(parent) || isInterfaceType(parent) ? parent.getFields()[selection.name.value] : undefined;
        let cost = 1;
        if (field && selection.selectionSet) {
          const childType = getNamedType(field.type);
          const ownSize = sizeArgument(selection.arguments ?? [], variables);
          if (isListType(getNullableType(field.type))) {
            const items = ownSize ?? size ?? limits.listBounds?.[`${parent.name}.${selection.name.value}`] ?? limits.assumedListSize;
            cost += (isCompositeType(childType) ? selectionCost(selection.selectionSet, childType, undefined) : 0) * items;
          } else {
            cost += isCompositeType(childType) ? selectionCost(selection.selectionSet, childType, ownSize) : 0;
          }
        }
        total += cost;
      }
      if (total >= cap) {
        return cap;
      }
    }
    return total;
  };
  const root = schema.getRootType(operation.operation);
  return root ? Math.min(cap, selectionCost(operation.selectionSet, root, undefined)) : 0;
}

/** The item count a `first`/`last`/`limit` argument asks for; a wrong value is the resolver's to refuse. */
function sizeArgument(args: readonly ArgumentNode[], variables: Readonly<Record<string, unknown>> | undefined): number | undefined {
  const size = args.find((arg) => SIZE_ARGUMENTS.includes(arg.name.value));
  const value: unknown = size ? valueFromASTUntyped(size.value, variables as Record<string, unknown> | undefined) : undefined;
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.max(1, value) : undefined;
}

/** The refusal of an operation that costs more than `maxCost`, or null. */
export function costRefusal(cost: number, limits: Pick<QueryLimits, 'maxCost'> = QUERY_LIMITS): GraphQLError | null {
  const tooCostly = message('query.tooCostly', { max: String(limits.maxCost) });
  return cost > limits.maxCost
    ? new GraphQLError(tooCostly.message, {
        extensions: { code: 'BAD_USER_INPUT', cost, maxCost: limits.maxCost, messageCode: tooCostly.code, messageParams: tooCostly.params, http: { status: 400 } },
      })
    : null;
}

/**
 * Whether the operation (or a fragment it spreads) asks for `__schema` or `__type`. `__typename`
 * is not introspection of the schema and stays allowed.
 */
export function selectsIntrospection(document: DocumentNode, operation: OperationDefinitionNode): boolean {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) {
      fragments.set(definition.name.value, definition);
    }
  }
  const visited = new Set<string>();
  const pending: SelectionSetNode[] = [operation.selectionSet];
  for (let next = pending.pop(); next; next = pending.pop()) {
    for (const selection of next.selections) {
      if (selection.kind === Kind.FIELD) {
        if (selection.name.value === '__schema' || selection.name.value === '__type') {
          return true;
        }
        if (selection.selectionSet) {
          pending.push(selection.selectionSet);
        }
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        pending.push(selection.selectionSet);
      } else if (!visited.has(selection.name.value)) {
        visited.add(selection.name.value);
        const fragment = fragments.get(selection.name.value);
        if (fragment) {
          pending.push(fragment.selectionSet);
        }
      }
    }
  }
  return false;
}

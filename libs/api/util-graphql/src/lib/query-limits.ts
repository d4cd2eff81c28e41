import { GraphQLError, Kind, type ASTVisitor, type ValidationContext, type SelectionSetNode } from 'graphql';

/**
 * Refuses queries nested deeper than `maxDepth` (fragments followed), so a hostile
 * client cannot make the server walk an enormous tree.
 */
export function depthLimit(maxDepth: number): (context: ValidationContext) => ASTVisitor {
  return (context) => ({
    OperationDefinition(node) {
      const depth = measure(node.selectionSet, context, 0, new Set());
      if (depth > maxDepth) {
        context.reportError(
          new GraphQLError(`query is nested ${depth} levels deep; at most ${maxDepth} are allowed`, {
            nodes: [node],
            extensions: { code: 'BAD_USER_INPUT' },
          }),
        );
      }
    },
  });
}

function measure(selectionSet: SelectionSetNode | undefined, context: ValidationContext, depth: number, seen: Set<string>): number {
  if (!selectionSet) {
    return depth;
  }
  let deepest = depth;
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      deepest = Math.max(deepest, measure(selection.selectionSet, context, depth + 1, seen));
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      deepest = Math.max(deepest, measure(selection.selectionSet, context, depth, seen));
    } else {
      const name = selection.name.value;
      const fragment = context.getFragment(name);
      if (fragment && !seen.has(name)) {
        deepest = Math.max(deepest, measure(fragment.selectionSet, context, depth, new Set([...seen, name])));
      }
    }
  }
  return deepest;
}

/** Refuses documents with more than `maxAliases` aliased fields (alias amplification). */
export function aliasLimit(maxAliases: number): (context: ValidationContext) => ASTVisitor {
  return (context) => {
    let aliases = 0;
    return {
      Field(node) {
        if (node.alias) {
          aliases += 1;
          if (aliases === maxAliases + 1) {
            context.reportError(
              new GraphQLError(`query uses more than ${maxAliases} aliases`, { nodes: [node], extensions: { code: 'BAD_USER_INPUT' } }),
            );
          }
        }
      },
    };
  };
}

import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { AppError } from '@ccos/shared/domain';

// The errors themselves know no transport (stores, services and resolvers throw them); they are
// exported here too so the GraphQL layer finds them beside the one function that maps them.
export { AppError, BadUserInputError, ConflictError, type ErrorCode, FieldConflictError, ForbiddenError, NotFoundError, PreconditionError, UnauthenticatedError } from '@ccos/shared/domain';

/**
 * The one place an {@link AppError} becomes a GraphQL error as clients see it: its message,
 * and its code and details (`messageCode`, `messageParams`, `field` …) as `extensions`, where
 * the operation met it (`formatted`'s path and locations). Null for any other error: a
 * GraphQLError of the server's own, or something unexpected that the edge masks.
 */
export function graphQLErrorOf(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError | null {
  const original = error instanceof GraphQLError ? error.originalError : error;
  if (!(original instanceof AppError)) {
    return null;
  }
  return { message: original.message, path: formatted.path, locations: formatted.locations, extensions: { ...original.extensions } };
}

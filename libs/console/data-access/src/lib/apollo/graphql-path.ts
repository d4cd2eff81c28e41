/** The API serves the console, so GraphQL (HTTP and WebSocket) is on the same origin. */
export const GRAPHQL_PATH = '/graphql';

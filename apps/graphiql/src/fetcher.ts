import type { Fetcher, FetcherOpts, FetcherParams } from '@graphiql/toolkit';
import { type DocumentNode, getIntrospectionQuery, getOperationAST, parse } from 'graphql';
import { type Client, createClient } from 'graphql-ws';

/**
 * GraphiQL's fetcher for this service: queries and mutations POST to /graphql, subscriptions go
 * over graphql-ws on the same path (ws: or wss: as the page). The Authorization header is the
 * one typed in the headers editor, or else the signed-in session's; the WebSocket gets the same
 * value in connection_init (`{ authorization }`), as the console sends it.
 */
/**
 * GraphiQL's own introspection query nests type references nine levels deep, past the API's depth
 * limit (12, fields counted from `__schema`); six levels of `ofType` fit, and this schema's
 * deepest type (`[X!]!`) needs three.
 */
const INTROSPECTION_QUERY = getIntrospectionQuery({ descriptions: true, inputValueDeprecation: true, typeDepth: 6 });

export function createIdeFetcher(sessionToken: () => string | null): Fetcher {
  const httpUrl = new URL('/graphql', location.href).href;
  const wsUrl = httpUrl.replace(/^http/, 'ws');
  let socket: { client: Client; authorization: string | null } | null = null;
  const clientFor = (authorization: string | null): Client => {
    if (!socket || socket.authorization !== authorization) {
      void socket?.client.dispose();
      socket = { authorization, client: createClient({ url: wsUrl, lazy: true, connectionParams: authorization ? { authorization } : {} }) };
    }
    return socket.client;
  };
  return async (params: FetcherParams, options?: FetcherOpts) => {
    const headers: Record<string, string> = { ...(options?.headers as Record<string, string> | undefined) };
    const typed = Object.keys(headers).find((name) => name.toLowerCase() === 'authorization');
    const token = sessionToken();
    const authorization = typed ? (headers[typed] ?? null) : token ? `Bearer ${token}` : null;
    if (params.operationName === 'IntrospectionQuery') {
      params = { ...params, query: INTROSPECTION_QUERY };
    }
    if (isSubscription(params, options?.documentAST)) {
      return clientFor(authorization).iterate({ query: params.query, operationName: params.operationName ?? undefined, variables: params.variables });
    }
    const response = await fetch(httpUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/graphql-response+json, application/json;q=0.9',
        ...headers,
        ...(authorization && !typed ? { authorization } : {}),
      },
      body: JSON.stringify(params),
    });
    return response.json();
  };
}

function isSubscription(params: FetcherParams, document: DocumentNode | undefined): boolean {
  try {
    return getOperationAST(document ?? parse(params.query), params.operationName ?? undefined)?.operation === 'subscription';
  } catch {
    return false;
  }
}

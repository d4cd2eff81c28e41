import { type EnvironmentProviders, inject, makeEnvironmentProviders } from '@angular/core';
import { type ApolloClient, ApolloLink, HttpLink } from '@apollo/client';
import { ErrorLink } from '@apollo/client/link/error';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { provideApollo } from 'apollo-angular';
import { OperationTypeNode } from 'graphql';
import { problemsOf } from '../errors/api-problem';
import { ErrorReporter } from '../errors/error-reporter';
import { Session } from '../session/session';
import { createConsoleCache } from './console-cache';
import { GRAPHQL_PATH } from './graphql-path';
import { LiveConnection } from './live-connection';

/**
 * Apollo for the console: queries and mutations over HTTP, subscriptions over graphql-ws,
 * both with the session's token; one error link that shows errors to the user and ends
 * the session when the API no longer accepts its token.
 */
export function provideConsoleApollo(): EnvironmentProviders {
  return makeEnvironmentProviders([provideApollo(createApolloOptions)]);
}

function createApolloOptions(): ApolloClient.Options {
  const session = inject(Session);
  const reporter = inject(ErrorReporter);
  const live = inject(LiveConnection);

  const authorization = new ApolloLink((operation, forward) => {
    const token = session.token();
    if (token) {
      operation.setContext(({ headers }: { headers?: Record<string, string> }) => ({ headers: { ...headers, authorization: `Bearer ${token}` } }));
    }
    return forward(operation);
  });

  const errors = new ErrorLink(({ error, operation }) => {
    const problems = problemsOf(error);
    const display = operation.getContext().errorDisplay ?? 'toast';
    // A refused token while signed in: the session is over. (Signing in itself fails with the same code; that form shows it.)
    if (session.signedIn() && problems.some((problem) => problem.code === 'UNAUTHENTICATED')) {
      session.expire();
      reporter.reportApiError(error, 'caller', problems);
      return;
    }
    reporter.reportApiError(error, display, problems);
  });

  const transport = ApolloLink.split(
    (operation) => operation.operationType === OperationTypeNode.SUBSCRIPTION,
    new GraphQLWsLink(live.client),
    new HttpLink({ uri: GRAPHQL_PATH }),
  );

  return {
    link: ApolloLink.from([errors, authorization, transport]),
    cache: createConsoleCache(),
    defaultOptions: { watchQuery: { fetchPolicy: 'cache-and-network' } },
  };
}

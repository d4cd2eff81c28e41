import { GraphQLError, GraphQLObjectType, GraphQLSchema, GraphQLString, graphql } from 'graphql';
import { describe, expect, it } from 'vitest';
import { message } from '@ccos/shared/messages';
import { AppError, BadUserInputError, NotFoundError, PreconditionError, graphQLErrorOf } from './errors';

/** What a client receives for an error a resolver threw, formatted as the API's edge does. */
async function clientSees(error: unknown): Promise<unknown> {
  const schema = new GraphQLSchema({
    query: new GraphQLObjectType({
      name: 'Query',
      fields: {
        probe: {
          type: GraphQLString,
          resolve: () => {
            throw error;
          },
        },
      },
    }),
  });
  const result = await graphql({ schema, source: '{ probe }' });
  const [reported] = result.errors ?? [];
  return reported ? graphQLErrorOf(reported.toJSON(), reported) : 'no error';
}

describe('graphQLErrorOf: the one place an AppError becomes a GraphQL error', () => {
  it.each([
    ['a coded NOT_FOUND', new NotFoundError('node', 'n-1'), { message: new NotFoundError('node', 'n-1').message, extensions: { code: 'NOT_FOUND', kind: 'node', messageCode: 'error.notFound', messageParams: { kind: 'node', id: 'n-1' } } }],
    [
      'a FAILED_PRECONDITION with details',
      new PreconditionError(message('node.isStatus', { status: 'INSTALLING' }), { status: 'INSTALLING' }),
      { message: 'the node is INSTALLING', extensions: { code: 'FAILED_PRECONDITION', status: 'INSTALLING', messageCode: 'node.isStatus', messageParams: { status: 'INSTALLING' } } },
    ],
    [
      'a BAD_USER_INPUT naming its field',
      new BadUserInputError('input.name', message('validation.empty')),
      {
        message: 'input.name must not be empty',
        extensions: {
          code: 'BAD_USER_INPUT', field: 'input.name', problemCode: 'validation.empty', problemParams: {},
          messageCode: 'error.badInput', messageParams: { field: 'input.name', problem: { code: 'validation.empty', params: {} } },
        },
      },
    ],
    [
      'any other code with retry details',
      new AppError('LOGIN_BUSY', message('user.loginBusy', { seconds: 1 }), { retryAfterSeconds: 1 }),
      { message: 'too many sign-in attempts in progress; try again in 1 s', extensions: { code: 'LOGIN_BUSY', retryAfterSeconds: 1, messageCode: 'user.loginBusy', messageParams: { seconds: 1 } } },
    ],
  ])('sends %s with its message, code and details where the operation met it', async (_case, error, expected) => {
    expect(await clientSees(error)).toEqual({ ...expected, path: ['probe'], locations: [{ line: 1, column: 3 }] });
  });

  it('keeps a coded message\u2019s code and parameters for the client\u2019s language', async () => {
    const sent = (await clientSees(new PreconditionError(message('error.notFound', { kind: 'cluster', id: 'c' })))) as { extensions: Record<string, unknown> };
    expect(sent.extensions).toMatchObject({ code: 'FAILED_PRECONDITION', messageCode: 'error.notFound', messageParams: { kind: 'cluster', id: 'c' } });
  });

  it('leaves everything else to the edge: unexpected errors and the server\u2019s own GraphQLErrors', async () => {
    expect(await clientSees(new Error('connection refused: postgres://u:secret@db'))).toBeNull();
    expect(await clientSees(new GraphQLError('refused', { extensions: { code: 'BAD_USER_INPUT' } }))).toBeNull();
  });

  it('knows no transport in the error itself: it is a plain Error with a code', () => {
    const error = new NotFoundError('node', 'n-1');
    expect(error).not.toBeInstanceOf(GraphQLError);
    expect(error).toBeInstanceOf(Error);
    expect(error.code).toBe('NOT_FOUND');
  });
});

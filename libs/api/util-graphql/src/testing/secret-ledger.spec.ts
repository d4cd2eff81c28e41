import { describe, expect, it } from 'vitest';
import { SecretLedger } from './secret-ledger';

describe('SecretLedger', () => {
  const ledger = () => SecretLedger.fromEmittedSchema();

  it('reads the @secret marks from the emitted schema', () => {
    expect(ledger().markedPositions()).toEqual(
      expect.arrayContaining([
        'Mutation.login(password)',
        'Mutation.changePassword(currentPassword)',
        'Mutation.changePassword(newPassword)',
        'CreateUserInput.password',
        'SshCredentialsInput.privateKey',
        'AddNodeInput.password',
        'RegisterClusterInput.kubeconfig',
        'RegisterClusterInput.token',
      ]),
    );
    expect(ledger().markedPositions()).not.toContain('RegisterClusterInput.name');
  });

  it('notes secrets sent as literals and variables, nested in inputs and fragments, and only those', () => {
    const book = ledger();
    book.noteRequest({ query: 'mutation { login(username: "alice-the-user", password: "literal-password-1") { token } }' });
    book.noteRequest([
      { query: 'mutation($i: AddNodeInput!) { addNode(input: $i) { id } }', variables: { i: { clusterId: 'c', hostname: 'not-a-secret-host', ip: '198.18.0.1', privateKey: '-----BEGIN KEY-----\nabc', password: 'short' } } },
      { query: 'mutation M($c: String!) { ...F } fragment F on Mutation { changePassword(currentPassword: $c, newPassword: "new-password-22") }', variables: { c: 'current-password-11' } },
    ]);
    book.noteRequest({ query: 'this is { not graphql' });
    expect(book.summary()).toMatchObject({
      checked: 4,
      tooShort: 1,
      positions: ['AddNodeInput.password', 'AddNodeInput.privateKey', 'Mutation.changePassword(currentPassword)', 'Mutation.changePassword(newPassword)', 'Mutation.login(password)'],
    });
  });

  it('finds a secret that came back in a response, the log after it was sent, or an audit row — JSON-escaped too — and names no value', () => {
    const book = ledger();
    const printedFirst = 'generated-admin-password';
    const log = `created user "admin" with password ${printedFirst}\n`;
    book.noteRequest({ query: 'mutation($p: String!) { login(username: "admin", password: $p) { token } }', variables: { p: printedFirst } }, log.length);
    book.noteRequest({ query: 'mutation($i: RegisterClusterInput!) { registerCluster(input: $i) { id } }', variables: { i: { name: 'x', apiServerUrl: 'u', vip: 'v', kubeconfig: 'apiVersion: v1\nkind: "Config"' } } });
    expect(book.leaks({ log })).toEqual([]);
    book.noteResponse('{"errors":[{"message":"wrong user name or password"}]}');
    expect(book.leaks({ log: `${log}later: ${printedFirst}`, auditRows: [{ detail: { args: { input: { kubeconfig: 'apiVersion: v1\nkind: "Config"' } } } }] })).toEqual([
      { position: 'Mutation.login(password)', where: 'the service log', hint: 'gen… (24 characters)' },
      { position: 'RegisterClusterInput.kubeconfig', where: 'an audit_log row', hint: 'api… (29 characters)' },
    ]);
    book.noteResponse(`{"data":{"echo":${JSON.stringify('apiVersion: v1\nkind: "Config"')}}}`);
    expect(() => book.assertNoLeaks({ log }, 'the API')).toThrow(/RegisterClusterInput\.kubeconfig api… \(29 characters\) in a response/);
  });
});

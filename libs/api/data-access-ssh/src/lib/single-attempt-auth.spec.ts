import type { AnyAuthMethod, AuthenticationType, KeyboardInteractiveAuthMethod, ParsedKey } from 'ssh2';
import { describe, expect, it } from 'vitest';
import { singleAttemptAuth, type AuthMethodName, type ResolvedCredential } from './single-attempt-auth';

function run(credential: ResolvedCredential, serverMethods: AuthenticationType[], rounds = 4) {
  const attempts: AuthMethodName[] = [];
  const offered: string[][] = [];
  const handler = singleAttemptAuth('root', credential, {
    attempt: (method) => attempts.push(method),
    methodsOffered: (methods) => offered.push([...methods]),
  }) as unknown as (left: AuthenticationType[] | null, partial: boolean | null, next: () => void) => AnyAuthMethod | false;
  const returned: (AnyAuthMethod | false)[] = [];
  for (let round = 0; round < rounds; round += 1) {
    returned.push(handler(round === 0 ? null : serverMethods, round === 0 ? null : false, () => undefined));
  }
  return { attempts, offered, returned };
}

describe('singleAttemptAuth', () => {
  it('asks with none, sends the password once, then gives up', () => {
    const { attempts, returned } = run({ kind: 'password', password: 'pw' }, ['publickey', 'password']);
    expect(attempts).toEqual(['none', 'password']);
    expect(returned).toEqual([{ type: 'none', username: 'root' }, { type: 'password', username: 'root', password: 'pw' }, false, false]);
  });

  it('sends the key once', () => {
    const key = { type: 'ssh-ed25519' } as unknown as ParsedKey;
    const { attempts, returned } = run({ kind: 'privateKey', key }, ['publickey', 'password']);
    expect(attempts).toEqual(['none', 'publickey']);
    expect(returned[1]).toEqual({ type: 'publickey', username: 'root', key });
    expect(returned.slice(2)).toEqual([false, false]);
  });

  it('sends nothing when the server does not take our method', () => {
    const { attempts, offered, returned } = run({ kind: 'password', password: 'pw' }, ['publickey']);
    expect(attempts).toEqual(['none']);
    expect(offered).toEqual([['publickey']]);
    expect(returned.slice(1)).toEqual([false, false, false]);
  });

  it('answers one keyboard-interactive password prompt when that is all the server takes', () => {
    const { attempts, returned } = run({ kind: 'password', password: 'pw' }, ['publickey', 'keyboard-interactive']);
    expect(attempts).toEqual(['none', 'keyboard-interactive']);
    const method = returned[1] as KeyboardInteractiveAuthMethod;
    const answers: string[][] = [];
    method.prompt('', '', '', [], (a) => answers.push(a));
    method.prompt('', '', '', [{ prompt: 'Password: ', echo: false }], (a) => answers.push(a));
    method.prompt('', '', '', [{ prompt: 'Password: ', echo: false }], (a) => answers.push(a));
    method.prompt('', '', '', [{ prompt: 'OTP: ', echo: true }], (a) => answers.push(a));
    expect(answers).toEqual([[], ['pw'], [''], ['']]);
  });
});

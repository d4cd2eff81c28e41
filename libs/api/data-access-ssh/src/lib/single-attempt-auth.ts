import type { AnyAuthMethod, AuthenticationType, AuthHandlerMiddleware, ParsedKey, Prompt } from 'ssh2';

/** The credential to present, already checked (a key is parsed and decrypted before we connect). */
export type ResolvedCredential =
  | { readonly kind: 'password'; readonly password: string }
  | { readonly kind: 'privateKey'; readonly key: ParsedKey };

/** A login method we may send; `none` only asks the server which methods it takes. */
export type AuthMethodName = 'none' | 'password' | 'publickey' | 'keyboard-interactive';

/** Hooks that let the connection (and tests) see the login unfold; they never receive a credential. */
export interface AuthObserver {
  /** The server listed the methods it accepts. */
  methodsOffered(methods: readonly string[]): void;
  /** We are about to send `method`. */
  attempt(method: AuthMethodName): void;
}

/**
 * An ssh2 `authHandler` that presents the credential exactly once. It first
 * sends `none` (as OpenSSH does; sshd does not count it as a failure) to
 * learn the server's methods, then sends the password — or, when the server
 * takes only `keyboard-interactive` (PAM-only sshd setups), answers the one
 * password prompt — or the key, and gives up after that single try. ssh2's
 * default handler walks through every configured method and
 * `tryKeyboard` would send the password a second time; retries in a loop
 * are how accounts get locked by pam_faillock or banned by fail2ban.
 */
export function singleAttemptAuth(username: string, credential: ResolvedCredential, observer: AuthObserver): AuthHandlerMiddleware {
  let state: 'start' | 'probed' | 'attempted' = 'start';
  // ssh2 takes the next method as the return value; `false` ends the login with
  // "All configured authentication methods failed".
  const handler = (methodsLeft: AuthenticationType[] | null): AnyAuthMethod | false => {
    if (state === 'start') {
      state = 'probed';
      observer.attempt('none');
      return { type: 'none', username };
    }
    if (state === 'attempted') {
      return false;
    }
    state = 'attempted';
    const offered = methodsLeft ?? [];
    observer.methodsOffered(offered);
    const method = chooseMethod(credential, offered);
    if (method !== null) {
      observer.attempt(method.type as AuthMethodName);
    }
    return method ?? false;
  };
  return handler;

  function chooseMethod(cred: ResolvedCredential, offered: readonly string[]): AnyAuthMethod | null {
    if (cred.kind === 'privateKey') {
      return offered.includes('publickey') ? { type: 'publickey', username, key: cred.key } : null;
    }
    if (offered.includes('password')) {
      return { type: 'password', username, password: cred.password };
    }
    if (offered.includes('keyboard-interactive')) {
      return { type: 'keyboard-interactive', username, prompt: passwordPrompt(cred.password) };
    }
    return null;
  }
}

/**
 * Answers keyboard-interactive rounds: the first round that asks for one
 * hidden value gets the password; any later question gets no answer, so the
 * password is sent once at most. Rounds without prompts (PAM sends some)
 * are acknowledged empty.
 */
function passwordPrompt(password: string) {
  let answered = false;
  return (_name: string, _instructions: string, _lang: string, prompts: Prompt[], finish: (answers: string[]) => void): void => {
    if (prompts.length === 0) {
      finish([]);
      return;
    }
    if (!answered && prompts.length === 1 && prompts[0]?.echo !== true) {
      answered = true;
      finish([password]);
      return;
    }
    finish(prompts.map(() => ''));
  };
}

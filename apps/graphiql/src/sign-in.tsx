import { LoginDocument, type LoginMutation, LogoutDocument } from '@ccos/shared/api-schema';
import { print } from 'graphql';
import { type FormEvent, useState } from 'react';
import { type IdeSession, clearSession, saveSession } from './session';

interface GraphqlAnswer<T> {
  readonly data?: T | null;
  readonly errors?: ReadonlyArray<{ readonly message: string }>;
}

async function post<T>(operationName: string, query: string, variables: Record<string, unknown>, token?: string): Promise<GraphqlAnswer<T>> {
  const response = await fetch('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ operationName, query, variables }),
  });
  return (await response.json()) as GraphqlAnswer<T>;
}

/** The bar above GraphiQL: sign in with the login mutation, or who is signed in and a way out. */
export function SignInBar(props: { readonly session: IdeSession | null; readonly onChange: () => void }) {
  const [username, setUsername] = useState('admin');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const signIn = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const answer = await post<LoginMutation>('Login', print(LoginDocument), { username, password });
      if (answer.data?.login) {
        saveSession(answer.data.login);
        setPassword('');
        props.onChange();
      } else {
        setError(answer.errors?.[0]?.message ?? 'sign-in failed');
      }
    } catch {
      setError('the service cannot be reached');
    } finally {
      setBusy(false);
    }
  };

  const signOut = async () => {
    const token = props.session?.token;
    clearSession();
    props.onChange();
    if (token) {
      await post('Logout', print(LogoutDocument), {}, token).catch(() => undefined);
    }
  };

  if (props.session) {
    return (
      <header className="ide-bar">
        <strong>ccos-scaler GraphQL</strong>
        <span data-testid="signed-in">
          Signed in as {props.session.user.username} ({props.session.user.role}); requests carry its bearer token
        </span>
        <button type="button" onClick={() => void signOut()}>
          Sign out
        </button>
      </header>
    );
  }
  return (
    <header className="ide-bar">
      <strong>ccos-scaler GraphQL</strong>
      <form onSubmit={(event) => void signIn(event)}>
        <label>
          User <input name="username" autoComplete="username" value={username} onChange={(event) => setUsername(event.target.value)} />
        </label>
        <label>
          Password <input name="password" type="password" autoComplete="current-password" value={password} onChange={(event) => setPassword(event.target.value)} />
        </label>
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
      <span role="alert">{error ?? 'Sign in to load the schema and run operations, or put an Authorization header in Headers.'}</span>
    </header>
  );
}

import { print } from 'graphql';
import { type FormEvent, useState } from 'react';
import { LoginDocument, type LoginMutation, LogoutDocument } from '@ccos/shared/api-schema';
import { type IdeSession, clearSession, saveSession } from './session';
import { type IdeLanguage, chooseLanguage, currentLanguage, wordsOf } from './words';

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
  const [language, setLanguage] = useState<IdeLanguage>(currentLanguage);
  const words = wordsOf(language);
  const switchLanguage = () => {
    const next = language === 'zh' ? 'en' : 'zh';
    chooseLanguage(next);
    setLanguage(next);
  };
  const languageButton = (
    <button type="button" className="ide-language" onClick={switchLanguage}>
      {words.other}
    </button>
  );

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
        setError(answer.errors?.[0]?.message ?? words.failed);
      }
    } catch {
      setError(words.unreachable);
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
        <strong>{words.title}</strong>
        <span data-testid="signed-in">{words.signedIn(props.session.user.username, props.session.user.role)}</span>
        <button type="button" onClick={() => void signOut()}>
          {words.signOut}
        </button>
        {languageButton}
      </header>
    );
  }
  return (
    <header className="ide-bar">
      <strong>{words.title}</strong>
      <form onSubmit={(event) => void signIn(event)}>
        <label>
          {words.user} <input name="username" autoComplete="username" value={username} onChange={(event) => setUsername(event.target.value)} />
        </label>
        <label>
          {words.password} <input name="password" type="password" autoComplete="current-password" value={password} onChange={(event) => setPassword(event.target.value)} />
        </label>
        <button type="submit" disabled={busy}>
          {words.signIn}
        </button>
      </form>
      <span role="alert">{error ?? words.hint}</span>
      {languageButton}
    </header>
  );
}

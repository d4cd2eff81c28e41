import './workers';
import 'graphiql/style.css';
import './ide.css';
import { GraphiQL } from 'graphiql';
import { StrictMode, useEffect, useMemo, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { EXAMPLE_TABS } from './examples';
import { createIdeFetcher } from './fetcher';
import { onSessionChange, readSession } from './session';
import { SignInBar } from './sign-in';

function Ide() {
  const [session, setSession] = useState(readSession);
  const refresh = () => setSession(readSession());
  useEffect(() => onSessionChange(refresh), []);
  const token = session?.token ?? null;
  const fetcher = useMemo(() => createIdeFetcher(() => token), [token]);
  return (
    <div className="ide">
      <SignInBar session={session} onChange={refresh} />
      <main className="ide-main">
        {/* A new sign-in remounts GraphiQL, so it fetches the schema with the new token. */}
        <GraphiQL key={token ?? 'signed-out'} fetcher={fetcher} defaultTabs={EXAMPLE_TABS} defaultEditorToolsVisibility="variables" />
      </main>
    </div>
  );
}

const root = document.getElementById('graphiql');
if (root) {
  createRoot(root).render(
    <StrictMode>
      <Ide />
    </StrictMode>,
  );
}

/**
 * The signed-in console: asks who is signed in, then lays out the menu (only the pages the
 * member's roles allow), the workspace switcher, the live indicator and the page of the address.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { ApiError, signInAgain } from './api.ts';
import { ErrorNote, Loading } from './components.tsx';
import { LiveContext, useLiveSocket } from './live.ts';
import { pagesFor, type ConsolePage } from './pages.ts';
import { useRoute, href, type Route } from './router.ts';
import { consoleSession, loadSession, SessionContext, useSession as useSession, type SignedIn } from './session.ts';

export function App() {
  const [signedIn, setSignedIn] = useState<SignedIn | undefined>();
  const [failure, setFailure] = useState<Error | undefined>();
  const [generation, setGeneration] = useState(0);

  useEffect(() => {
    loadSession().then(setSignedIn, (error: Error) => {
      if (error instanceof ApiError && (error.status === 401 || error.status === 403)) signInAgain();
      else setFailure(error);
    });
  }, []);

  const session = useMemo(
    () => signedIn && consoleSession(signedIn, (workspaceId) => {
      setSignedIn({ ...signedIn, workspaceId });
      setGeneration((g) => g + 1);
    }),
    [signedIn],
  );

  if (failure) return <main class="boot"><ErrorNote error={failure} prefix="The console could not start." /></main>;
  if (!session) return <main class="boot"><Loading rows={4} label="Signing in" /></main>;
  return (
    <SessionContext.Provider value={session}>
      <Console key={`${session.workspace.workspaceId}:${generation}`} />
    </SessionContext.Provider>
  );
}

function Console() {
  const route = useRoute();
  const session = useSession();
  const live = useLiveSocket(session.workspace.workspaceId);
  const [menuOpen, setMenuOpen] = useState(false);
  const visible = pagesFor(session);
  const slug = route.parts[0] ?? '';
  const page = visible.find((p) => p.slug === slug);

  useEffect(() => setMenuOpen(false), [route.path]);

  return (
    <LiveContext.Provider value={live}>
      <a class="skip" href="#content">Skip to content</a>
      <div class={`layout${menuOpen ? ' menu-open' : ''}`}>
        <header class="topbar">
          <button type="button" class="btn link menu-toggle" aria-expanded={menuOpen} aria-controls="menu" onClick={() => setMenuOpen(!menuOpen)}>
            ☰ <span class="sr-only">Menu</span>
          </button>
          <a class="brand" href={href()}>Switchboard</a>
          <WorkspaceSwitcher />
          <span class={`live ${live.state}`} role="status" aria-live="polite" title="Realtime connection">
            {live.state === 'online' ? 'Live' : live.state === 'connecting' ? 'Connecting…' : 'Offline'}
          </span>
          <form method="post" action="/signout" class="signout">
            <input type="hidden" name="csrf" value={session.csrfToken} />
            <span class="muted user" id="signed-in-as">{session.user.email}</span>
            <button type="submit" id="sign-out" class="btn secondary">Sign out</button>
          </form>
        </header>
        <nav id="menu" class="sidebar" aria-label="Console">
          <ul>
            {visible.map((p) => (
              <li>
                <a href={href(...(p.slug ? [p.slug] : []))} aria-current={p === page ? 'page' : undefined}>
                  {p.title}
                </a>
              </li>
            ))}
          </ul>
          <p class="roles muted">Your role here: {session.workspace.roles.join(', ').toLowerCase() || 'none'}</p>
        </nav>
        <main id="content" tabIndex={-1}>
          <CurrentPage page={page} route={route} />
        </main>
      </div>
    </LiveContext.Provider>
  );
}

function WorkspaceSwitcher() {
  const session = useSession();
  if (session.workspaces.length < 2) return <span class="workspace">{session.workspace.name}</span>;
  return (
    <label class="workspace">
      <span class="sr-only">Workspace</span>
      <select value={session.workspace.workspaceId} onChange={(e) => session.switchWorkspace((e.currentTarget as HTMLSelectElement).value)}>
        {session.workspaces.map((w) => (
          <option value={w.workspaceId}>{w.name}</option>
        ))}
      </select>
    </label>
  );
}

/**
 * The page of the address. Declared at module level: a component made inside another's render
 * would be a new type each time, and Preact would throw away the page's state (typed text, a
 * secret shown once) whenever the console re-renders.
 */
function CurrentPage({ page, route }: { page: ConsolePage | undefined; route: Route }) {
  if (!page) {
    return (
      <div class="card">
        <h1>Not here</h1>
        <p>This page does not exist, or your role in this workspace does not include it.</p>
        <p><a href={href()}>Back to the overview</a></p>
      </div>
    );
  }
  const Page = page.component;
  return <Page route={route} />;
}

/**
 * Who is signed in and where: `GET /v3/session` (the member, their workspaces with roles, the
 * CSRF token), the selected workspace (kept per browser tab in sessionStorage) and what the
 * roles matrix lets the member do there — the same matrix the service enforces (core/identity).
 */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { can, type Access, type Capability, type Role } from '../../../core/identity/roles.ts';
import { api, useCredentials } from './api.ts';

export interface Workspace {
  workspaceId: string;
  name: string;
  roles: Role[];
  /** Whether the helpdesk works here (`helpdeskEnabled` of `GET /v3/accounts`): its pages hide when not. */
  helpdeskEnabled?: boolean;
}

export interface SignedIn {
  user: { userId: string; email: string; name: string };
  workspaceId: string;
  workspaces: Workspace[];
  session: { id: string; expiresAt: string; absoluteExpiresAt: string };
  csrfToken: string;
}

export interface ConsoleSession {
  user: SignedIn['user'];
  sessionId: string;
  csrfToken: string;
  workspace: Workspace;
  workspaces: Workspace[];
  /** Whether the member's roles here allow this access (what a page shows and offers). */
  may(capability: Capability, access: Access): boolean;
  switchWorkspace(workspaceId: string): void;
}

const STORED_WORKSPACE = 'switchboard.workspace';

/** Asks the service who is signed in, in the workspace this tab chose before (if still theirs). */
export async function loadSession(): Promise<SignedIn> {
  const [first, accounts] = await Promise.all([
    api<SignedIn>('GET', '/v3/session', undefined, { noWorkspace: true }),
    api<Array<{ id: string; helpdeskEnabled: boolean }>>('GET', '/v3/accounts', undefined, { noWorkspace: true }).catch(() => []),
  ]);
  const chosen = sessionStorage.getItem(STORED_WORKSPACE);
  const workspaceId = first.workspaces.some((w) => w.workspaceId === chosen) ? chosen! : first.workspaceId;
  useCredentials({ csrfToken: first.csrfToken, workspaceId });
  const workspaces = first.workspaces.map((w) => ({ ...w, helpdeskEnabled: accounts.find((a) => a.id === w.workspaceId)?.helpdeskEnabled }));
  return { ...first, workspaces, workspaceId };
}

export function consoleSession(signedIn: SignedIn, onSwitch: (workspaceId: string) => void): ConsoleSession {
  const workspace = signedIn.workspaces.find((w) => w.workspaceId === signedIn.workspaceId) ?? {
    workspaceId: signedIn.workspaceId,
    name: 'Workspace',
    roles: [],
  };
  return {
    user: signedIn.user,
    sessionId: signedIn.session.id,
    csrfToken: signedIn.csrfToken,
    workspace,
    workspaces: signedIn.workspaces,
    may: (capability, access) => can(workspace.roles, capability, access),
    switchWorkspace(workspaceId) {
      sessionStorage.setItem(STORED_WORKSPACE, workspaceId);
      useCredentials({ csrfToken: signedIn.csrfToken, workspaceId });
      onSwitch(workspaceId);
    },
  };
}

export const SessionContext = createContext<ConsoleSession | undefined>(undefined);

export function useSession(): ConsoleSession {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside the signed-in console');
  return session;
}

import type { Role } from './roles.ts';
import type { Page, PageRequest } from '../shared/pagination.ts';
import type { PlanName } from '../plans/plans.ts';

export interface User {
  id: string;
  email: string;
  name: string;
  createdAt: Date;
}

export interface Workspace {
  id: string;
  name: string;
  isPersonal: boolean;
  plan: PlanName;
  createdAt: Date;
}

export interface Membership {
  workspaceId: string;
  userId: string;
  roles: Role[];
  createdAt: Date;
}

export interface Member extends Membership {
  email: string;
  name: string;
}

/** Who is calling, in which workspace, with which roles (resolved per request). */
export interface Actor {
  userId: string;
  workspaceId: string;
  roles: Role[];
  /** The API token that authenticated the request, when it was an API key. */
  tokenId?: string;
  /**
   * Set when an OAuth bearer token authenticated the request: the approved scopes, which narrow
   * the roles (5.3). Absent for API keys, which act with everything their creator may do.
   */
  scopes?: readonly string[];
  /** The OAuth grant (consent) the bearer token was issued under: a scope challenge is remembered on it (step-up). */
  oauthGrantId?: string;
  /** The sign-in session (its public id) that authenticated the request, when it was the session cookie. */
  sessionId?: string;
}

/** A person with the stored hash of their password (null until they set one). */
export interface Credentials {
  user: User;
  passwordHash: string | null;
}

/** Persistence of users, workspaces and memberships. */
export interface IdentityStore {
  findUserByEmail(email: string): Promise<User | undefined>;
  /** Whether any person exists at all (first run: nobody does). */
  anyUser(): Promise<boolean>;
  getUser(id: string): Promise<User | undefined>;
  /** The person and their password hash, by (normalized) email. */
  findCredentialsByEmail(email: string): Promise<Credentials | undefined>;
  /** Row-locked read of the person and their password hash: serializes password changes. */
  lockCredentials(userId: string): Promise<Credentials | undefined>;
  /** Replaces the password hash and ends every sign-in session of the person (API tokens stay). */
  setPasswordHash(userId: string, passwordHash: string): Promise<void>;
  insertUser(user: User): Promise<void>;
  insertWorkspace(workspace: Workspace): Promise<void>;
  updateWorkspace(id: string, patch: Partial<Pick<Workspace, 'name' | 'plan'>>): Promise<Workspace | undefined>;
  getWorkspace(id: string): Promise<Workspace | undefined>;
  /** Row-locked read: serializes quota checks of one workspace. */
  lockWorkspace(id: string): Promise<Workspace | undefined>;
  insertMembership(membership: Membership): Promise<void>;
  getMembership(workspaceId: string, userId: string): Promise<Membership | undefined>;
  /** Every workspace the user belongs to, with their roles there. */
  listWorkspacesOf(userId: string): Promise<Array<Workspace & { roles: Role[] }>>;
  listMembers(workspaceId: string, request: PageRequest): Promise<Page<Member>>;
  getMember(workspaceId: string, userId: string): Promise<Member | undefined>;
  setRoles(workspaceId: string, userId: string, roles: Role[]): Promise<void>;
  deleteMembership(workspaceId: string, userId: string): Promise<void>;
}

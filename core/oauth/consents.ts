import type { Actor } from '../identity/identity.ts';
import { authorize } from '../identity/roles.ts';
import { notFound } from '../shared/errors.ts';
import type { Page, PageRequest } from '../shared/pagination.ts';
import { DEFAULT_CLIENT_NAME } from './clients.ts';
import type { OAuthStores } from './store.ts';

/** An app's access to the workspace, as the workspace sees it (spec 5.3; item shape designed here). */
export interface ConsentView {
  id: string;
  clientId: string;
  clientName: string;
  logoUri: string | null;
  verified: boolean;
  userId: string;
  userEmail: string;
  scopes: string[];
  createdAt: Date;
  updatedAt: Date;
}

/** Owners and Admins see which apps hold access to the workspace ("API tokens and OAuth apps"). */
export async function listConsents(stores: OAuthStores, actor: Actor, request: PageRequest): Promise<Page<ConsentView>> {
  authorize(actor.roles, 'tokens', 'read');
  const found = await stores.oauth.listConsents(actor.workspaceId, request);
  return { ...found, data: found.data.map((c) => ({ ...c, clientName: c.clientName?.trim() || DEFAULT_CLIENT_NAME })) };
}

/** Cuts an app off: the consent and every code and token issued under it are gone at once. */
export async function deleteConsent(stores: OAuthStores, actor: Actor, id: string): Promise<void> {
  authorize(actor.roles, 'tokens', 'write');
  const consent = await stores.oauth.getConsent(id);
  if (!consent || consent.workspaceId !== actor.workspaceId) throw notFound(`Consent ${id} not found`);
  await stores.oauth.deleteConsent(id);
}

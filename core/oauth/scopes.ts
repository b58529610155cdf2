/**
 * OAuth scopes (spec 2.7). A scope only ever narrows what the person's role allows: the
 * effective permission of a bearer token is its scopes ∩ the approver's role (5.3).
 */
export const SCOPES = [
  'profile',
  'connections:read',
  'connections:connect',
  'connections:write',
  'messages:read',
  'messages:send',
  'contacts:read',
  'contacts:write',
  'helpdesk:read',
  'helpdesk:write',
  'webhooks:read',
  'webhooks:write',
  'stats:read',
] as const;
export type Scope = (typeof SCOPES)[number];

/** Exists, but no client may request it. */
export const UNREQUESTABLE_SCOPES = ['legacy'] as const;

export const DEFAULT_SCOPE: Scope = 'profile';

/** What each scope lets an assistant do, as the consent screen says it. */
export const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  profile: 'Know who you are and which workspace you chose',
  'connections:read': 'See your connections and their status',
  'connections:connect': 'Pair and disconnect numbers (QR and logout)',
  'connections:write': 'Create, edit, connect and disconnect connections',
  'messages:read': 'Read message history and download received attachments',
  'messages:send': 'Send messages: text, media, audio, stickers, templates, lists, buttons',
  'contacts:read': 'Read contacts',
  'contacts:write': 'Create and edit contacts',
  'helpdesk:read': 'Read helpdesk conversations, contacts and settings',
  'helpdesk:write': 'Reply to and manage the helpdesk',
  'webhooks:read': 'Read webhooks and their delivery history',
  'webhooks:write': 'Create, edit and delete webhooks, and read their signing secret',
  'stats:read': 'Read workspace statistics',
};

/** A scope that also satisfies others ("connections:write ... also satisfies connections:read"). */
const IMPLIED: Partial<Record<Scope, readonly Scope[]>> = {
  'connections:write': ['connections:read', 'connections:connect'],
};

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** Splits a space-separated `scope` parameter; duplicates collapse, order is kept. */
export function splitScope(value: string | undefined | null): string[] {
  return [...new Set((value ?? '').split(' ').filter((s) => s.length > 0))];
}

/** The scopes a granted set actually covers, implications included. */
export function coveredScopes(granted: readonly string[]): Set<Scope> {
  const covered = new Set<Scope>();
  for (const scope of granted) {
    if (!isScope(scope)) continue;
    covered.add(scope);
    for (const implied of IMPLIED[scope] ?? []) covered.add(implied);
  }
  return covered;
}

/** Does the granted set cover at least one of `anyOf`? */
export function satisfies(granted: readonly string[], anyOf: readonly Scope[]): boolean {
  const covered = coveredScopes(granted);
  return anyOf.some((scope) => covered.has(scope));
}

/** Space-separated, in the canonical order of SCOPES: the `scope` of responses and documents. */
export function joinScopes(scopes: Iterable<string>): string {
  const set = new Set(scopes);
  return SCOPES.filter((s) => set.has(s)).join(' ');
}

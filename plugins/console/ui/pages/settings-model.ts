/**
 * What the Helpdesk settings page reads and writes: inboxes, teams, labels, canned responses,
 * macros and SLA policies as `/v3/helpdesk/…` answers them, the workspace's members and connections they refer to,
 * and the sections of the page (`#/settings/<section>/<id>`).
 */
import type { Priority } from '../../../../core/helpdesk/conversations/conversation.ts';
import type { MacroAction } from '../../../../core/helpdesk/library/macro-actions.ts';
import { get, itemsOf } from '../api.ts';
import type { Connection } from './connections-model.ts';
export type { Connection, MacroAction, Priority };

export const SECTIONS = [
  { slug: 'inboxes', title: 'Inboxes' },
  { slug: 'teams', title: 'Teams' },
  { slug: 'labels', title: 'Labels' },
  { slug: 'canned-responses', title: 'Canned responses' },
  { slug: 'macros', title: 'Macros' },
  { slug: 'sla-policies', title: 'SLA policies' },
] as const;
export type SectionSlug = (typeof SECTIONS)[number]['slug'];

export interface Inbox {
  id: string;
  name: string;
  channelType: 'CONNECTION' | 'API';
  connectionId: string | null;
  timezone: string;
  channelConfig: { webhookUrl: string | null; hmacMandatory: boolean; hmacToken?: string } | null;
  createdAt: string;
  updatedAt: string;
  /** Only in the answer of its creation (API inboxes). */
  inboundWebhookSecret?: string;
}

/** Someone of the workspace as a list of people (inbox and team members, `GET /v3/members`). */
export interface Person {
  userId: string;
  name: string;
  email: string;
  roles?: string[];
}

export interface Team {
  id: string;
  name: string;
  description: string | null;
  members: Person[];
  createdAt: string;
  updatedAt: string;
}

export interface Label {
  id: string;
  name: string;
  color: string | null;
  description: string | null;
}

export interface CannedResponse {
  id: string;
  shortCode: string;
  content: string;
}

export interface Macro {
  id: string;
  name: string;
  visibility: 'personal' | 'workspace';
  createdBy: string | null;
  actions: MacroAction[];
}

/**
 * Every item of a paged list (`page`, `per_page` up to 100): the catalogues of a helpdesk are
 * small, and a settings screen shows them all. Stops after 20 pages, which no workspace reaches.
 */
export async function everyPage<T>(path: string): Promise<T[]> {
  const items: T[] = [];
  for (let page = 1; page <= 20; page++) {
    const answer = await get<{ data: T[]; totalPages?: number }>(path, { per_page: 100, page });
    items.push(...itemsOf<T>(answer));
    if (!answer || typeof answer !== 'object' || !('totalPages' in answer) || page >= (answer.totalPages ?? 1)) break;
  }
  return items;
}

export const loadInboxes = () => everyPage<Inbox>('/v3/helpdesk/inboxes');
export const loadTeams = () => everyPage<Team>('/v3/helpdesk/teams');
export const loadLabels = () => everyPage<Label>('/v3/helpdesk/labels');
export const loadCannedResponses = () => everyPage<CannedResponse>('/v3/helpdesk/canned-responses');
export const loadMacros = () => everyPage<Macro>('/v3/helpdesk/macros');
export const loadMembers = () => everyPage<Person>('/v3/members');
export const loadConnections = async (): Promise<Connection[]> => itemsOf<Connection>(await get('/v3/connections'));

/** The path of one item: ids go into addresses percent-encoded. */
export const itemPath = (collection: string, id: string, rest = '') => `/v3/helpdesk/${collection}/${encodeURIComponent(id)}${rest}`;

/** How a person reads in a list: their name, and the email that tells two of one name apart. */
export const personLabel = (p: Person) => (p.name && p.name !== p.email ? `${p.name} (${p.email})` : p.email);

export function channelName(inbox: Inbox, connections: Connection[] | undefined): string {
  if (inbox.channelType === 'API') return 'API channel';
  const connection = connections?.find((c) => c.id === inbox.connectionId);
  return connection ? `${connection.name}${connection.phoneNumber ? ` (${connection.phoneNumber})` : ''}` : 'Connection (not readable)';
}

/** The browser's time zone, the default of a new inbox (the API's default is UTC). */
export const browserTimeZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

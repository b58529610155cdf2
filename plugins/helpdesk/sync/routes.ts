import { t } from 'elysia';
import { INBOX_SYNC_STATUSES } from '../../../core/helpdesk/inboxes/inbox-sync-status.ts';
import { latestInboxSync, startInboxSync, type InboxSync, type SyncCounts } from '../../../core/helpdesk/inboxes/inbox-sync.ts';
import { authenticatedRoutes, authErrors, iso, StandardError, Timestamp, Uuid } from '../../kernel/http.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { inboxSyncTuning } from './job.ts';
import { inboxSyncStores } from './store.ts';

const Counts = (what: string) =>
  t.Object(
    {
      total: t.Integer({ description: 'One-to-one chats of the connection (recounted after each page)' }),
      processed: t.Integer({ description: 'Chats done so far' }),
      created: t.Integer({ description: `${what} that did not exist before` }),
    },
    { description: `${what}: progress counted in chats (one chat is one contact, its history one conversation)` },
  );

const SyncView = t.Object({
  id: Uuid,
  inboxId: Uuid,
  status: t.UnionEnum([...INBOX_SYNC_STATUSES], { description: 'RUNNING, then COMPLETED or FAILED (final)' }),
  contacts: Counts('Contacts'),
  conversations: Counts('Conversations'),
  messages: t.Object({ imported: t.Integer({ description: 'Helpdesk messages brought in (each chat: its latest 100 messages not yet in the helpdesk)' }) }),
  startedAt: Timestamp,
  finishedAt: t.Nullable(Timestamp),
  error: t.Nullable(t.String({ description: 'Why it FAILED' })),
});

const Id = t.Object({ id: t.String() });
const NotFound = { 404: t.Union([StandardError, t.Object({ message: t.String(), hint: t.String() })]) };

const DESCRIPTION = [
  'Brings the connection\'s past one-to-one chats into the inbox (group chats and broadcasts are skipped), a page of chats at a time in the background.',
  'Each chat\'s contact is found by phone or created with the chat\'s name; its latest 100 messages not yet in the helpdesk join the contact\'s latest unresolved conversation of the inbox, or a new one.',
  'A new conversation is OPEN when the chat\'s last message came from the contact within the last 24 hours (waiting for an answer), RESOLVED otherwise (history).',
  'Messages keep their time; outgoing ones their delivery status. No per-conversation or per-message events are sent for history:',
  'helpdesk.contact_sync.updated and helpdesk.conversation_sync.updated report the sync when it starts, after each page and when it ends.',
  'Running it again imports only what is missing.',
].join(' ');

/** History sync of an inbox (core/helpdesk/inboxes/inbox-sync.ts). */
export function inboxSyncRoutes(ctx: PluginContext) {
  const deps = { clock: ctx.clock, ids: ctx.ids, random: ctx.random };

  return authenticatedRoutes(ctx, { name: 'plugins.helpdesk.inbox-sync', prefix: '/v3/helpdesk/inboxes', tags: ['Helpdesk'] })
    .post(
      '/:id/sync',
      async ({ actor, params, set }) => {
        // The sync, its first page's job and its events commit together (the outbox).
        const sync = await ctx.storage.transaction(inboxSyncStores, (s) => startInboxSync(s, deps, actor, params.id, { chatsPerPage: inboxSyncTuning.chatsPerPage }));
        set.status = 202;
        return present(sync);
      },
      {
        params: Id,
        body: t.Optional(t.Object({}, { description: 'No fields; the body may be left out', additionalProperties: true })),
        response: { ...authErrors, ...NotFound, 202: SyncView, 409: StandardError, 422: StandardError },
        detail: {
          summary: 'Sync the chat history of the inbox\'s connection (Owner, Admin, Manager; PRO plan)',
          description: `${DESCRIPTION} 409 while a sync of the inbox is running; 422 for an inbox without a connection (API inboxes).`,
        },
      },
    )
    .get('/:id/sync', async ({ actor, params }) => present(await latestInboxSync(ctx.storage.read(inboxSyncStores), actor, params.id)), {
      params: Id,
      response: { ...authErrors, ...NotFound, 200: SyncView },
      detail: { summary: 'The latest history sync of the inbox (404 before the first)', description: DESCRIPTION },
    });
}

function present(sync: InboxSync) {
  const counts = (c: SyncCounts) => ({ total: c.total, processed: c.processed, created: c.created });
  return {
    id: sync.id,
    inboxId: sync.inboxId,
    status: sync.status,
    contacts: counts(sync.contacts),
    conversations: counts(sync.conversations),
    messages: { imported: sync.messagesImported },
    startedAt: iso(sync.startedAt),
    finishedAt: iso(sync.finishedAt),
    error: sync.error,
  };
}

import { t } from 'elysia';
import {
  CHANNEL_TYPES,
  createInbox,
  deleteInbox,
  getInbox,
  listInboxes,
  listInboxMembers,
  readsInboxSecrets,
  setInboxMembers,
  updateInbox,
  type Inbox,
  type InboxDeps,
  type InboxMember,
} from '../../../core/helpdesk/inboxes/inboxes.ts';
import type { Actor } from '../../../core/identity/identity.ts';
import { catalogueRoutes } from '../../kernel/catalogue-routes.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { announceAccessChange } from '../../kernel/realtime.ts';
import { authErrors, iso, StandardError, Timestamp, Uuid } from '../../kernel/http.ts';
import { inboxStores, isTimeZone } from './inbox-and-contact-stores.ts';

const ChannelConfig = t.Object(
  {
    webhookUrl: t.Nullable(t.String({ description: 'Receives the outgoing messages of the API inbox' })),
    hmacMandatory: t.Boolean({ description: 'Inbound calls must carry x-helpdesk-token or x-helpdesk-signature (spec 5.6); a credential present but wrong is always refused' }),
    hmacToken: t.Optional(t.String({ description: 'The inbound credential; shown to Owners, Admins and Managers only' })),
  },
  { description: 'API inboxes only' },
);

const InboxView = t.Object({
  id: Uuid,
  name: t.String(),
  channelType: t.UnionEnum([...CHANNEL_TYPES]),
  connectionId: t.Nullable(t.String({ description: 'The bound connection (CONNECTION inboxes)' })),
  timezone: t.String({ description: 'IANA zone name' }),
  channelConfig: t.Nullable(ChannelConfig),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

const CreatedInboxView = t.Composite([
  InboxView,
  t.Object({ inboundWebhookSecret: t.Optional(t.String({ description: 'API inboxes: the inbound credential, returned on creation' })) }),
]);

const MemberView = t.Object({ userId: Uuid, name: t.String(), email: t.String() });
const MembersView = t.Object({ data: t.Array(MemberView) });

const Settings = {
  name: t.String({ description: '1 to 120 characters' }),
  timezone: t.Optional(t.String({ description: 'IANA zone name; default UTC' })),
  webhookUrl: t.Optional(t.Nullable(t.String({ description: 'API inboxes: absolute http(s) URL receiving outgoing messages; private, loopback, link-local and internal addresses are refused (400) unless OUTBOUND_ALLOW exempts them' }))),
  hmacMandatory: t.Optional(t.Boolean({ description: 'API inboxes: refuse inbound calls with neither x-helpdesk-token nor x-helpdesk-signature; default false' })),
};

const Id = t.Object({ id: t.String() });
const NotFound = { 404: t.Union([StandardError, t.Object({ message: t.String(), hint: t.String() })]) };

/** Helpdesk inboxes (spec 2.10, 4.6) and their members. */
export function inboxRoutes(ctx: PluginContext) {
  const deps: InboxDeps = { clock: ctx.clock, ids: ctx.ids, random: ctx.random, isTimeZone, outbound: ctx.outbound };

  return catalogueRoutes(ctx, {
    name: 'plugins.helpdesk.inboxes',
    prefix: '/v3/helpdesk/inboxes',
    tags: ['Helpdesk'],
    stores: inboxStores,
    view: InboxView,
    present,
    // Only creation checks the role early: the writes on one inbox answer an Agent 404 for an
    // inbox they cannot see (never 403), so that check stays in core, after visibility.
    list: { run: listInboxes, summary: 'Inboxes (an Agent sees those they belong to); `s` searches the name' },
    get: { run: getInbox, errors: NotFound, summary: 'One inbox' },
    update: {
      body: t.Object({ ...Settings, name: t.Optional(Settings.name) }),
      run: (s, actor, id, body) => updateInbox(s, deps, actor, id, body),
      errors: NotFound,
      summary: 'Change name, timezone, webhookUrl or hmacMandatory (PRO plan)',
    },
    remove: { run: deleteInbox, errors: NotFound, summary: 'Delete an inbox (PRO plan)' },
  }).guard({ auth: true }, (app) =>
    app
      // Creation runs on the pool, not in a transaction (its one insert comes after the outbound
      // check of the webhook URL), and answers an API inbox's inbound credential beyond its view.
      .post(
        '',
        async ({ actor, body, set }) => {
          const inbox = await createInbox(ctx.storage.read(inboxStores), deps, actor, body);
          set.status = 201;
          return { ...present(inbox, actor), ...(inbox.inboundSecret !== null && { inboundWebhookSecret: inbox.inboundSecret }) };
        },
        {
          role: ['helpdesk.configure', 'write'],
          body: t.Object({
            ...Settings,
            channelType: t.UnionEnum([...CHANNEL_TYPES], { description: 'API: an API-channel inbox; CONNECTION: bound to connectionId' }),
            connectionId: t.Optional(t.String({ description: 'CONNECTION inboxes: a connection of the workspace, bound to one inbox at most' })),
          }),
          response: { ...authErrors, ...NotFound, 201: CreatedInboxView, 409: StandardError },
          detail: { summary: 'Create an inbox (PRO plan); an API inbox answers its inboundWebhookSecret' },
        },
      )
      .get('/:id/members', async ({ actor, params }) => ({ data: (await listInboxMembers(ctx.storage.read(inboxStores), actor, params.id)).map(presentMember) }), {
        params: Id,
        response: { ...authErrors, ...NotFound, 200: MembersView },
        detail: { summary: 'Members of the inbox' },
      })
      .put(
        '/:id/members',
        async ({ actor, params, body }) => {
          const members = await ctx.storage.transaction(inboxStores, (s) => setInboxMembers(s, actor, params.id, body.userIds));
          // Sockets of who left the inbox leave its room now, and who joined it joins it now.
          await announceAccessChange(ctx.realtime, { workspaceId: actor.workspaceId });
          return { data: members.map(presentMember) };
        },
        {
          params: Id,
          body: t.Object({ userIds: t.Array(t.String(), { description: 'Workspace members; replaces the inbox members', maxItems: 500 }) }),
          response: { ...authErrors, ...NotFound, 200: MembersView },
          detail: { summary: 'Replace the members of the inbox (PRO plan)' },
        },
      ),
  );
}

function present(inbox: Inbox, actor: Actor) {
  return {
    id: inbox.id,
    name: inbox.name,
    channelType: inbox.channelType,
    connectionId: inbox.connectionId,
    timezone: inbox.timezone,
    channelConfig:
      inbox.channelType === 'API'
        ? {
            webhookUrl: inbox.webhookUrl,
            hmacMandatory: inbox.hmacMandatory,
            ...(readsInboxSecrets(actor) && inbox.inboundSecret !== null && { hmacToken: inbox.inboundSecret }),
          }
        : null,
    createdAt: iso(inbox.createdAt),
    updatedAt: iso(inbox.updatedAt),
  };
}

function presentMember(m: InboxMember) {
  return { userId: m.userId, name: m.name, email: m.email };
}

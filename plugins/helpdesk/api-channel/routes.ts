import { Elysia, t } from 'elysia';
import type { OpenAPIV3 } from 'openapi-types';
import {
  authenticateInbound,
  MAX_INBOUND_CONTENT_LENGTH,
  MAX_SOURCE_ID_LENGTH,
  parseInbound,
  receiveApiMessage,
  receiveApiStatusUpdate,
  SIGNATURE_HEADER,
  TOKEN_HEADER,
} from '../../../core/helpdesk/api-channel/inbound.ts';
import { DELIVERY_OUTCOMES, MESSAGE_STATUSES } from '../../../core/helpdesk/conversations/message-status.ts';
import type { ConversationDeps } from '../../../core/helpdesk/conversations/conversations.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { bodyLimits, readBytes } from '../../kernel/http.ts';
import { parseJsonText } from '../../kernel/http.ts';
import { countRefusal } from '../../kernel/http.ts';
import { StandardError, Uuid } from '../../kernel/http.ts';
import { helpdeskMessageStores } from '../conversations/store.ts';
import { apiChannelInboxes } from './store.ts';

export const API_CHANNEL_PREFIX = '/webhooks/helpdesk';

const Received = t.Object({
  messageId: Uuid,
  conversationId: Uuid,
  contactId: Uuid,
});

const StatusUpdated = t.Object({
  messageId: Uuid,
  conversationId: Uuid,
  status: t.UnionEnum([...MESSAGE_STATUSES], { description: 'The reply\'s status now (a late or backward report leaves it unchanged)' }),
  externalError: t.Nullable(t.String({ description: 'Set when FAILED' })),
});

const SOURCE_ID: OpenAPIV3.SchemaObject = { type: 'string', minLength: 1, maxLength: MAX_SOURCE_ID_LENGTH };
const REQUEST_BODY: OpenAPIV3.RequestBodyObject = {
  required: true,
  content: {
    'application/json': {
      schema: {
        oneOf: [
          {
            title: 'Message',
            type: 'object',
            required: ['sourceId', 'content', 'sender'],
            properties: {
              sourceId: { ...SOURCE_ID, description: 'Your id of the message; a second push with the same sourceId stores nothing and answers the same ids' },
              content: { type: 'string', minLength: 1, maxLength: MAX_INBOUND_CONTENT_LENGTH },
              sender: {
                type: 'object',
                required: ['email'],
                properties: {
                  name: { type: 'string', maxLength: 200, nullable: true },
                  email: { type: 'string', format: 'email', description: 'Finds the contact (or creates one)' },
                  identifier: { ...SOURCE_ID, nullable: true, description: 'Your id of the person; replies name it as recipientIdentifier (default: the email)' },
                },
              },
            },
          },
          {
            title: 'Status update',
            type: 'object',
            required: ['event', 'sourceId', 'status'],
            properties: {
              event: { type: 'string', enum: ['status_update'] },
              sourceId: { ...SOURCE_ID, description: 'The id you answered when the reply was delivered ({ sourceId }), or the reply\'s own id (data.sourceId of the POST you received)' },
              status: { type: 'string', enum: [...DELIVERY_OUTCOMES] },
              error: { type: 'string', maxLength: 1000, nullable: true, description: 'With FAILED: why (shown as externalError)' },
            },
          },
        ],
      },
    },
  },
};

const DESCRIPTION = `Your app pushes a person's message, or the status of a reply it received, into an API inbox (spec 4.5). No apikey.

Credentials (spec 5.6), either one:
- \`${TOKEN_HEADER}\`: the inbox's secret (inboundWebhookSecret, later channelConfig.hmacToken);
- \`${SIGNATURE_HEADER}\`: the lowercase hex HMAC-SHA256 of the raw request body, keyed with that secret (an optional \`sha256=\` prefix is accepted).

With channelConfig.hmacMandatory one of them is required; without, a request with neither is accepted. A credential that is present but wrong is always 401, even when not mandatory.

A message joins the person's unresolved conversation of the inbox, or opens one (201). A status update moves a reply forward (PENDING → SENT → DELIVERED → READ; FAILED before delivery) and answers 201 too; a late or backward one changes nothing.

Outgoing: each reply of the inbox is POSTed to channelConfig.webhookUrl as \`{ event: "message.created", data: { sourceId, recipientIdentifier, content, attachments }, deliveredAt }\`, signed with \`${SIGNATURE_HEADER}\` the same way; data.sourceId is the reply's id (deduplicate on it: a retry carries the same). Answer 2xx (below 400), optionally with \`{ "sourceId": "<your id>" }\` to name the reply by your own id in status updates. 3 attempts, 5 s then 10 s apart, 10 s timeout; then the reply is FAILED.`;

/** The API channel's inbound endpoint (spec 4.5, 5.6): no apikey; the inbox's secret or a signature over the raw body. */
export function apiChannelRoutes(ctx: PluginContext) {
  const deps: ConversationDeps = { clock: ctx.clock, ids: ctx.ids };
  const bodyLimit = bodyLimits(ctx.config).body;

  return new Elysia({ name: 'plugins.helpdesk.api-channel', prefix: API_CHANNEL_PREFIX, detail: { tags: ['Helpdesk API channel'] } }).post(
    '/:inboxId',
    async ({ params, request, set, server }) => {
      // The raw bytes, as signed: read before anything parses them.
      const raw = await readBytes(request, bodyLimit);
      const inbox = await ctx.storage.read(apiChannelInboxes).byId(params.inboxId);
      try {
        authenticateInbound(inbox, { token: request.headers.get(TOKEN_HEADER), signature: request.headers.get(SIGNATURE_HEADER) }, raw);
      } catch (error) {
        // Guessing an inbox's token (or id) is limited per client address across processes.
        await countRefusal(ctx, 'inbound-token', request, error, server?.requestIP(request)?.address);
        throw error;
      }
      const body = parseJsonText(new TextDecoder().decode(raw));
      const input = parseInbound(body);
      if (input.kind === 'message') {
        const received = await ctx.storage.transaction(helpdeskMessageStores, (s) => receiveApiMessage(s, deps, inbox!, input));
        set.status = 201;
        return received;
      }
      const updated = await ctx.storage.transaction(helpdeskMessageStores, (s) => receiveApiStatusUpdate(s, inbox!, input));
      set.status = 201;
      return { messageId: updated.messageId, conversationId: updated.conversationId, status: updated.status, externalError: updated.externalError };
    },
    {
      parse: 'none',
      params: t.Object({ inboxId: t.String() }),
      response: {
        201: t.Union([Received, StatusUpdated], { description: 'A message received, or a status update applied' }),
        400: StandardError,
        401: StandardError,
        404: StandardError,
        429: StandardError,
      },
      detail: {
        summary: 'API channel: push a message or a reply\'s status into an API inbox',
        description: DESCRIPTION,
        parameters: [
          { name: TOKEN_HEADER, in: 'header', required: false, schema: { type: 'string' }, description: 'The inbox\'s secret' },
          { name: SIGNATURE_HEADER, in: 'header', required: false, schema: { type: 'string' }, description: 'Hex HMAC-SHA256 of the raw body keyed with the inbox\'s secret (optionally `sha256=`-prefixed)' },
        ],
        requestBody: REQUEST_BODY,
      },
    },
  );
}

import { t } from 'elysia';
import { Timestamp, Uuid } from '../kernel/http.ts';
import { CAMPAIGN_STATUSES } from '../../core/campaigns/campaign-status.ts';
import { REPORTED_RECIPIENT_STATUSES } from '../../core/campaigns/campaign.ts';
import { MAX_JITTER_SECONDS, MAX_MESSAGES_PER_MINUTE, UNOFFICIAL_DEFAULT_PACE } from '../../core/campaigns/campaigns.ts';
import { OFFICIAL_MESSAGES_PER_MINUTE } from '../../core/campaigns/pacing.ts';

const Variables = t.Record(t.String(), t.Union([t.String(), t.Number(), t.Boolean()]), { description: 'Values for the message placeholders, by name' });

/** The request of `POST /v3/campaigns` (types only; the rules are checked by core/campaigns). */
export const CampaignBody = t.Object({
  name: t.String({ description: '1 to 200 characters' }),
  connectionId: t.String(),
  message: t.Record(t.String(), t.Unknown(), {
    description:
      'Exactly one message field, as in `POST /v3/connections/{id}/chats/messages`: text, image, video, audio, document, sticker, location, contacts, list, buttons or template (official connections; required outside the 24-hour window). `{{name}}` / `{{name|fallback}}` placeholders anywhere in its text',
  }),
  audience: t.Object(
    {
      numbers: t.Optional(t.Array(t.Union([t.String(), t.Number()]), { description: 'Phone numbers in international format' })),
      recipients: t.Optional(t.Array(t.Object({ phone: t.Union([t.String(), t.Number()]), variables: t.Optional(Variables) }))),
      csv: t.Optional(t.String({ description: 'CSV text: a header row (`phone`, then variable names), one recipient per row; `,` or `;` separated' })),
      helpdeskContacts: t.Optional(t.Object({ labels: t.Array(t.String(), { description: 'Contacts of conversations carrying any of these labels (names); variables `name`, `phone`' }) })),
    },
    { description: 'Exactly one of the fields' },
  ),
  schedule: t.Optional(
    t.Object({
      startAt: t.Optional(t.Nullable(t.String({ description: 'An ISO 8601 instant with offset, or a local date-time (`2026-12-01T09:00`) read in `timezone`; omitted: at once' }))),
      timezone: t.Optional(t.Nullable(t.String({ description: 'IANA time zone of a local `startAt` and the default of the quiet hours' }))),
    }),
  ),
  pace: t.Optional(
    t.Object({
      messagesPerMinute: t.Optional(
        t.Nullable(
          t.Integer({
            description: `1 to ${MAX_MESSAGES_PER_MINUTE}; null sends as fast as the queue goes. Default ${UNOFFICIAL_DEFAULT_PACE.messagesPerMinute} on unofficial connections; official connections are capped at the network's ${OFFICIAL_MESSAGES_PER_MINUTE} per minute per number (the default)`,
          }),
        ),
      ),
      jitterSeconds: t.Optional(t.Integer({ description: `0 to ${MAX_JITTER_SECONDS}: a random extra delay of up to this many seconds between sends (default ${UNOFFICIAL_DEFAULT_PACE.jitterSeconds} on paced unofficial connections, else 0)` })),
      quietHours: t.Optional(
        t.Nullable(
          t.Object({
            from: t.String({ description: 'HH:MM local time when sending stops' }),
            to: t.String({ description: 'HH:MM local time when it starts again (before `from`: the quiet hours span midnight)' }),
            timezone: t.Optional(t.String({ description: 'IANA zone; default the schedule timezone, else UTC' })),
          }),
        ),
      ),
    }),
  ),
  webhook: t.Optional(
    t.Nullable(
      t.Object({
        url: t.String({ description: 'Receives campaign.started, .progress (at most every 10 s while sending), .paused, .resumed, .completed, .cancelled, .failed' }),
        secret: t.Optional(t.Nullable(t.String({ description: '16 to 256 characters: deliveries are signed with X-Switchboard-Signature-256 as connection webhooks are. Never returned' }))),
      }),
    ),
  ),
  draft: t.Optional(t.Boolean({ description: 'Save without reserving credits or sending; `POST /v3/campaigns/{id}/launch` later' })),
});

const Progress = t.Object(
  {
    total: t.Integer(),
    queued: t.Integer(),
    sending: t.Integer({ description: 'Handed to the driver, not yet accepted by the network' }),
    sent: t.Integer({ description: 'Accepted by the network (includes delivered and read)' }),
    delivered: t.Integer({ description: 'Includes read' }),
    read: t.Integer(),
    failed: t.Integer(),
    replied: t.Integer({ description: 'Recipients who wrote back after their campaign message' }),
    skipped: t.Integer({ description: 'Not sent when reached: outside the 24-hour window on an official number' }),
    optedOut: t.Integer(),
    cancelled: t.Integer(),
    invalid: t.Integer(),
  },
  { description: 'Recipients by status' },
);

export const CampaignView = t.Object({
  id: Uuid,
  name: t.String(),
  connectionId: t.Nullable(t.String()),
  status: t.UnionEnum(CAMPAIGN_STATUSES),
  statusReason: t.Nullable(t.String({ description: 'Why the service paused or failed it: connection_not_connected, connection_deleted' })),
  message: t.Unknown(),
  schedule: t.Object({ startAt: t.Nullable(Timestamp), timezone: t.Nullable(t.String()) }),
  pace: t.Object({
    messagesPerMinute: t.Nullable(t.Integer()),
    jitterSeconds: t.Integer(),
    quietHours: t.Nullable(t.Object({ from: t.String(), to: t.String(), timezone: t.String() })),
  }),
  webhook: t.Nullable(t.Object({ url: t.String(), signed: t.Boolean() })),
  progress: Progress,
  credits: t.Object(
    {
      reserved: t.Integer({ description: 'Reserved at launch: one per recipient to send to' }),
      consumed: t.Integer({ description: 'Used by sends the network accepted' }),
      refunded: t.Integer({ description: 'Given back: failed sends, opt-outs met while sending, cancelled recipients' }),
      held: t.Integer({ description: 'Still reserved: recipients queued or in flight' }),
    },
    { description: 'The campaign’s credit reservation (zeros for a draft)' },
  ),
  createdBy: t.Nullable(t.String()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  startedAt: t.Nullable(Timestamp),
  finishedAt: t.Nullable(Timestamp),
});

export const RecipientView = t.Object({
  position: t.Integer({ description: 'Place in the audience, from 0' }),
  phone: t.String(),
  variables: t.Record(t.String(), t.String()),
  status: t.UnionEnum(REPORTED_RECIPIENT_STATUSES),
  error: t.Nullable(t.String()),
  messageId: t.Nullable(t.String({ description: 'The message sent (see the connection’s message history)' })),
  dispatchedAt: t.Nullable(Timestamp),
  repliedAt: t.Nullable(Timestamp),
});

export const OptOutView = t.Object({
  phone: t.String({ description: 'E.164 digits' }),
  reason: t.String({ description: 'How the number got here: the stop word replied, or the reason given' }),
  createdAt: Timestamp,
});

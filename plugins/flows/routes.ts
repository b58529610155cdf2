import { Elysia, t } from 'elysia';
import { authenticatedRoutes, authErrors, iso, StandardError, Timestamp } from '../kernel/http.ts';
import type { PluginContext } from '../kernel/context.ts';
import { MessageView, presentMessage } from '../kernel/message-view.ts';
import { messagingDeps, messagingStores } from '../kernel/storage.ts';
import { createFlow, flowEncryption, provisionFlowKey, type FlowDeps, type FlowEncryption } from '../../core/flows/flows.ts';
import { sendFlow } from '../../core/flows/send-flow.ts';
import { generateFlowKeyPair } from '../kernel/security.ts';
import { flowStores } from './store.ts';
import { answerDataExchange, DATA_EXCHANGE_PREFIX } from './data-exchange.ts';

const Id = t.Object({ id: t.String() });
const NotFound = { 404: StandardError };
const Refused = { 422: StandardError, 502: StandardError };

const EncryptionView = t.Object({
  phoneNumberId: t.String({ description: 'The business phone number the key belongs to' }),
  registered: t.Boolean({ description: 'A key pair exists and its public half was registered with the platform' }),
  dataExchangeUrl: t.Nullable(t.String({ description: 'The endpoint to set as a data_exchange Flow’s endpointUri; null before the key is provisioned' })),
  publicKey: t.Nullable(t.String({ description: 'The registered public key (PEM)' })),
  registeredAt: t.Nullable(Timestamp),
});

const ValidationError = t.Object({ error: t.Optional(t.String()), error_type: t.Optional(t.String()), message: t.Optional(t.String()) }, { additionalProperties: true });

/**
 * Flows on official connections (spec 4.3 rows `flows`, `send-flow`, `flows-encryption`;
 * "Flow kinds"), and the platform's encrypted data-exchange endpoint (no apikey; 4.5, 6.2).
 */
export function flowRoutes(ctx: PluginContext) {
  const deps: FlowDeps = {
    clock: ctx.clock,
    ids: ctx.ids,
    drivers: ctx.drivers,
    generateKeyPair: generateFlowKeyPair,
    dataExchangeUrl: (endpointId) => `${ctx.config.publicUrl}${DATA_EXCHANGE_PREFIX}/${endpointId}`,
  };
  const encryptionView = ({ phoneNumberId, key, dataExchangeUrl }: FlowEncryption) => ({
    phoneNumberId,
    registered: Boolean(key?.registeredAt),
    dataExchangeUrl,
    publicKey: key?.publicKeyPem ?? null,
    registeredAt: key ? iso(key.registeredAt) : null,
  });

  const authenticated = authenticatedRoutes(ctx, { name: 'plugins.flows', prefix: '/v3/connections/:id', tags: ['Flows'] })
    .post(
      '/flows',
      async ({ actor, params, body, set }) => {
        const { validationErrors, ...created } = await createFlow(ctx.storage.read(flowStores), deps, actor, params.id, body);
        set.status = 201;
        return { ...created, validation_errors: validationErrors };
      },
      {
        role: ['connections', 'write'],
        params: Id,
        body: t.Object({
          flowJson: t.Union([t.Record(t.String(), t.Any()), t.String()], { description: 'The Flow JSON, as an object or a string holding one' }),
          publish: t.Optional(t.Boolean({ description: 'Publish at once when the platform finds no validation errors' })),
          name: t.Optional(t.String({ description: 'Unique on the business account; generated when left out' })),
          categories: t.Optional(t.Array(t.String(), { description: 'Default ["OTHER"]' })),
          endpointUri: t.Optional(t.String({ description: 'data_exchange only: must be the dataExchangeUrl (set when left out)' })),
        }),
        response: {
          ...authErrors,
          ...NotFound,
          ...Refused,
          201: t.Object({
            id: t.String({ description: 'The platform’s Flow id (use as flowId in send-flow)' }),
            name: t.String(),
            kind: t.UnionEnum(['navigate', 'data_exchange']),
            status: t.UnionEnum(['DRAFT', 'PUBLISHED']),
            endpointUri: t.Nullable(t.String()),
            validation_errors: t.Array(ValidationError, { description: 'The platform’s findings; not empty means not published' }),
          }),
        },
        detail: {
          summary: 'Create a Flow on the platform (and publish it), answering the platform’s validation_errors (official connections)',
          description:
            'Kinds (spec 4.3): `navigate` (screens fixed in the Flow JSON; only the format is checked) and `data_exchange` (`data_api_version: "3.0"` and a `routing_model`; ' +
            'its endpoint is the connection’s `dataExchangeUrl`, so the Flow encryption key must be provisioned first). A Flow with validation errors is created as a draft and not published.',
        },
      },
    )
    .post(
      '/chats/messages/send-flow',
      async ({ actor, params, body, headers, set }) => {
        const sent = await ctx.storage.transaction(messagingStores, (stores) =>
          sendFlow(stores, messagingDeps(ctx), actor, params.id, body, { idempotencyKey: headers['idempotency-key'] }),
        );
        set.status = 201;
        if (!sent.created) set.headers['idempotent-replayed'] = 'true';
        return { ...presentMessage(sent.message), flowToken: sent.flowToken };
      },
      {
        role: ['messages.send', 'write'],
        params: Id,
        body: t.Object({
          to: t.String(),
          header: t.Optional(t.String({ description: 'Up to 60 characters' })),
          body: t.String({ description: 'Up to 1024 characters' }),
          footer: t.Optional(t.String({ description: 'Up to 60 characters' })),
          cta: t.String({ description: 'The button that opens the Flow, up to 30 characters' }),
          flowId: t.String({ description: 'The platform’s Flow id' }),
          flowAction: t.Optional(t.UnionEnum(['navigate', 'data_exchange'], { description: 'Default navigate' })),
          screen: t.Optional(t.String({ description: 'navigate: the first screen' })),
          data: t.Optional(t.Record(t.String(), t.Any(), { description: 'navigate: the first screen’s data' })),
          flowToken: t.Optional(t.String({ description: 'Your correlation id; generated as flow_<uuid> when left out' })),
          mode: t.Optional(t.UnionEnum(['published', 'draft'], { description: 'Default published' })),
        }),
        response: { ...authErrors, ...NotFound, 201: t.Composite([MessageView, t.Object({ flowToken: t.String() })]), 422: StandardError },
        detail: {
          summary: 'Send a Flow (official connections; inside the 24-hour window); answers the flowToken that threads the submission back',
          description: 'The submission arrives as `messages.upsert` with `messageType: interactiveResponseMessage`; `nativeFlowResponseMessage.paramsJson` holds the `flow_token`.',
        },
      },
    )
    .put(
      '/flows-encryption',
      async ({ actor, params, body }) => encryptionView(await provisionFlowKey(ctx.storage.read(flowStores), deps, actor, params.id, { rotate: body?.rotate })),
      {
        role: ['connections', 'write'],
        params: Id,
        body: t.Optional(t.Object({ rotate: t.Optional(t.Boolean({ description: 'A new key pair even if the number has one' })) }, { additionalProperties: true })),
        response: { ...authErrors, ...NotFound, ...Refused, 200: EncryptionView },
        detail: {
          summary: 'Provision the phone number’s Flow key pair (RSA-2048) and register its public half with the platform (needs the app secret)',
          description: 'The key belongs to the phone number and survives deleting the connection; calling again re-registers it (with `rotate: true`, a new pair).',
        },
      },
    )
    .get(
      '/flows-encryption',
      async ({ actor, params }) => encryptionView(await flowEncryption(ctx.storage.read(flowStores), deps, actor, params.id)),
      { params: Id, response: { ...authErrors, ...NotFound, 422: StandardError, 200: EncryptionView }, detail: { summary: 'The phone number’s Flow key: registered, and the dataExchangeUrl' } },
    );

  return new Elysia({ name: 'plugins.flows.all' }).use(authenticated).use(answerDataExchange(ctx));
}


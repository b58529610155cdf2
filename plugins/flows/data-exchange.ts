import { Elysia, t } from 'elysia';
import type { PluginContext } from '../kernel/context.ts';
import { outboundPost } from '../kernel/webhooks.ts';
import { bodyLimits, readText } from '../kernel/http.ts';
import { standard } from '../kernel/http.ts';
import { isAuthentic } from '../kernel/security.ts';
import { webhookStore } from '../kernel/webhooks.ts';
import { asEncryptedFlowRequest, decryptFlowRequest, encryptFlowResponse, FlowDecryptionError } from '../kernel/security.ts';
import { signDelivery, SIGNATURE_HEADER, TIMESTAMP_HEADER } from '../../core/webhooks/signature.ts';
import {
  classifyFlowRequest,
  DATA_EXCHANGE_TIMEOUT_MS,
  ERROR_NOTIFICATION_ANSWER,
  errorAnswer,
  flowQuestion,
  PING_ANSWER,
  readCustomerReply,
  type ReadReply,
} from '../../core/flows/data-exchange.ts';
import type { FlowKey } from '../../core/flows/flows.ts';
import { flowKeyStore } from './store.ts';

export const DATA_EXCHANGE_PREFIX = '/v3/flows/data-exchange';

/** HTTP statuses the platform documents for a Flow endpoint. */
const DECRYPTION_FAILED = 421; // the platform re-fetches the public key and retries
const SIGNATURE_FAILED = 432;

/** The encrypted answer is text; failures are JSON in the standard shape (spec 7.2) like every other error. */
const text = (body: string, status: number) => new Response(body, { status, headers: { 'content-type': 'text/plain' } });

/**
 * The Flow data-exchange endpoint the platform calls (no apikey; spec 4.5, 6.2): checks the
 * platform's `x-hub-signature-256` (the app secret), decrypts, answers `ping` itself, asks the
 * connection webhook subscribed to `flow.data_exchange` once (about 5 s, no retry), and answers
 * encrypted with the request's key and flipped IV, base64 `text/plain`.
 *
 * Failures the platform can act on: 421 when the request does not decrypt with the number's
 * key (it refreshes the key), 432 for a bad signature. When the customer's answer is missing or
 * unusable (a bare 200, not an object, a timeout) the user gets the current screen again with
 * `data.error_message`; on the first request of a Flow, which has no current screen, HTTP 502.
 */
export function answerDataExchange(ctx: PluginContext) {
  return new Elysia({ name: 'plugins.flows.data-exchange', prefix: DATA_EXCHANGE_PREFIX, detail: { tags: ['Flows'] } }).post(
    '/:endpointId',
    async ({ params, request }) => {
      const key = await ctx.storage.read(flowKeyStore).byEndpoint(params.endpointId);
      if (!key) return standard(404, 'No Flow endpoint here');
      const raw = await readText(request, bodyLimits(ctx.config).body);
      if (!signedByPlatform(key, raw, request.headers.get('x-hub-signature-256'))) return standard(SIGNATURE_FAILED, 'Invalid x-hub-signature-256');
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        body = undefined;
      }
      const encrypted = asEncryptedFlowRequest(body);
      if (!encrypted) return standard(400, 'The body must be { encrypted_flow_data, encrypted_aes_key, initial_vector }');
      let decrypted;
      try {
        decrypted = decryptFlowRequest(key.privateKeyPem, encrypted);
      } catch (error) {
        if (error instanceof FlowDecryptionError) return standard(DECRYPTION_FAILED, error.message);
        throw error;
      }
      const { payload, aesKey, iv } = decrypted;
      const answer = (value: unknown) => text(encryptFlowResponse(value, aesKey, iv), 200);
      switch (classifyFlowRequest(payload)) {
        case 'ping':
          return answer(PING_ANSWER);
        case 'error_notification':
          return answer(ERROR_NOTIFICATION_ANSWER);
        case 'question': {
          const reply = await askCustomer(ctx, key, payload);
          if (reply.ok) return answer(reply.answer);
          const shown = errorAnswer(payload, reply.reason);
          return shown ? answer(shown) : standard(502, `The business could not answer: ${reply.reason}`);
        }
      }
    },
    {
      parse: 'none',
      params: t.Object({ endpointId: t.String() }),
      response: { 200: t.String({ description: 'The encrypted answer: base64 of AES-128-GCM ciphertext + tag, sent as text/plain' }) },
      detail: {
        summary: 'Flow data exchange: the platform’s encrypted requests (RSA-OAEP-SHA256 + AES-128-GCM), answered encrypted (base64 text/plain)',
        description:
          'Not for API clients: the dataExchangeUrl of `GET /v3/connections/{id}/flows-encryption`. `ping` is answered by the service; other actions go as plain signed JSON to the connection webhook subscribed to `flow.data_exchange` (about 5 s, no retry). ' +
          '421: the request does not decrypt with this number’s key (the platform refreshes the key). 432: bad signature. An unusable answer from the webhook shows the current screen again with `data.error_message` (502 on the first screen).',
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['encrypted_flow_data', 'encrypted_aes_key', 'initial_vector'],
                properties: { encrypted_flow_data: { type: 'string' }, encrypted_aes_key: { type: 'string' }, initial_vector: { type: 'string' } },
              },
            },
          },
        },
      },
    },
  );
}

/** The platform signs its requests like its callbacks: `x-hub-signature-256` with the app secret. */
function signedByPlatform(key: FlowKey, raw: string, header: string | null): boolean {
  return header !== null && isAuthentic({ id: key.connectionId, workspaceId: key.workspaceId, credentials: { appSecret: key.appSecret }, phoneNumber: null }, raw, { 'x-hub-signature-256': header });
}

/** One signed POST to the connection's `flow.data_exchange` webhook; never retried (section 8). */
async function askCustomer(ctx: PluginContext, key: FlowKey, payload: unknown): Promise<ReadReply> {
  const hooks = await ctx.storage.read((db) => webhookStore(db, ctx.box)).subscribedTo(key.workspaceId, key.connectionId, 'flow.data_exchange');
  const hook = hooks.find((h) => h.hmacEnabled);
  if (!hook) return { ok: false, reason: 'no webhook of the connection subscribes to flow.data_exchange' };
  const body = JSON.stringify(flowQuestion(payload, key.connectionId));
  const timestamp = Math.floor(ctx.clock.now().getTime() / 1000);
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'Switchboard-Webhooks/1',
    'x-switchboard-event': 'flow.data_exchange',
    [SIGNATURE_HEADER]: signDelivery(hook.secret, timestamp, body),
    [TIMESTAMP_HEADER]: String(timestamp),
  };
  return readCustomerReply(await outboundPost(ctx.outbound)(hook.url, body, headers, DATA_EXCHANGE_TIMEOUT_MS));
}

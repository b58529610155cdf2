import { Elysia, t } from 'elysia';
import { completeSyncSession, issueSyncToken, readSyncToken, SYNC_TOKEN_MINUTES, type SyncMode } from '../../../core/connections/sync-session.ts';
import { badRequest, DomainError } from '../../../core/shared/errors.ts';
import { messagingDeps, messagingStores, poolMessagingStores } from '../../connections/stores.ts';
import { REALM } from '../auth.ts';
import { authenticatedRoutes } from '../route-group.ts';
import { countRefusal } from '../auth-failures.ts';
import { bodyLimits, readText } from '../body.ts';
import type { AppContext } from '../context.ts';
import { httpStatusOf } from '../error-status.ts';
import { HttpResponseError, standard } from '../errors.ts';
import { parseJsonText } from '../input-guard.ts';
import { authErrors, CodedError, iso, StandardError, Timestamp, Uuid } from '../schemas.ts';
import { ConnectionView, present, settled } from './connections.ts';

export const SYNC_COMPLETE_PATH = '/v3/connections/sync-session/complete';
export const SYNC_RECONNECT_PATH = '/v3/connections/sync-session/reconnect-complete';

const SyncTokenView = t.Object({
  syncToken: t.String({ description: 'Signed, single-use; send it as `Authorization: Bearer` to complete or reconnect-complete. Never logged by the service.' }),
  expiresAt: Timestamp,
  connectionId: Uuid,
  completeUrl: t.String({ description: 'Where a companion completes the first pairing of this connection' }),
  reconnectCompleteUrl: t.String({ description: 'Where a companion re-pairs this connection (same number)' }),
});

/** The request body, for the OpenAPI document (the handler reads and checks it itself). */
const MATERIAL_BODY = {
  required: true,
  content: {
    'application/json': {
      schema: {
        type: 'object',
        description:
          'The account’s multi-device session material as Baileys keeps it, binary values in BufferJSON form (`{"type":"Buffer","data":"<base64>"}`). Either `creds` (+ `keys`) or `files`. At most MAX_MEDIA_BYTES (16 MiB).',
        properties: {
          connectionId: { type: 'string', description: 'Optional: the connection the companion means; refused (403) when the token is for another one' },
          creds: { type: 'object', description: 'The content of `creds.json` of a paired session (`me.id` is the account)' },
          keys: {
            type: 'object',
            description: 'Signal keys by type (`pre-key`, `session`, `sender-key`, `app-state-sync-key`, …) then by id, as `AuthenticationState.keys` stores them',
            additionalProperties: { type: 'object' },
          },
          files: {
            type: 'object',
            description: 'Instead of creds/keys: the folder written by `useMultiFileAuthState`, file name → parsed JSON content (`creds.json`, `pre-key-1.json`, …)',
            additionalProperties: {},
          },
        },
      },
    },
  },
} as const;

const COMPLETE_ERRORS = {
  400: StandardError,
  401: StandardError,
  403: StandardError,
  404: t.Union([CodedError, StandardError]),
  409: StandardError,
  413: StandardError,
  422: StandardError,
};

/** `POST /v3/connections/{id}/sync-session`: a member asks for the sync token (API key or OAuth). */
export function syncTokenRoutes(ctx: AppContext) {
  const deps = messagingDeps(ctx);
  return authenticatedRoutes(ctx, { name: 'routes.sync-token', prefix: '/v3/connections', tags: ['Connections'] })
    .post(
      '/:id/sync-session',
      async ({ actor, params, set }) => {
        const issued = await issueSyncToken(poolMessagingStores(ctx), deps, actor, params.id);
        set.status = 201;
        return {
          syncToken: issued.syncToken,
          expiresAt: iso(issued.expiresAt),
          connectionId: issued.connection.id,
          completeUrl: `${ctx.config.publicUrl}${SYNC_COMPLETE_PATH}`,
          reconnectCompleteUrl: `${ctx.config.publicUrl}${SYNC_RECONNECT_PATH}`,
        };
      },
      {
        role: ['connections', 'write'],
        params: t.Object({ id: t.String() }),
        body: t.Optional(t.Object({}, { description: 'No fields' })),
        response: { ...authErrors, 201: SyncTokenView, 404: t.Union([CodedError, StandardError]), 422: StandardError },
        detail: {
          summary: `A sync token for this connection (signed, single-use, valid ${SYNC_TOKEN_MINUTES} minutes): a companion holding the account's session completes the pairing with it`,
        },
      },
    );
}

/**
 * The companion's side (spec 4.3, 5.6): no API key, the sync token as bearer. Mounted before the
 * JSON body hook: session material is larger than an API body, so it is read here, bounded by
 * MAX_MEDIA_BYTES, and only after the token's signature has been checked.
 */
export function syncSessionRoutes(ctx: AppContext) {
  const deps = messagingDeps(ctx);
  const limit = bodyLimits(ctx.config).media;

  // Pairing anew and re-pairing: 201 with the connection once its session opened (or CONNECTING).
  const complete = async (mode: SyncMode, request: Request, set: { status?: number | string }, peer: string | undefined) => {
    const token = bearerToken(request);
    try {
      readSyncToken(deps, token);
      const body = await materialBody(request, limit);
      const connection = await ctx.db.transaction().execute((trx) =>
        completeSyncSession({ ...messagingStores(trx, ctx) }, deps, {
          token,
          material: body.material,
          mode,
          expectedConnectionId: body.connectionId,
        }),
      );
      const view = await present(ctx, await settled(ctx, connection.workspaceId, connection.id));
      set.status = 201;
      return view;
    } catch (error) {
      await countRefusal(ctx, 'signed-link', request, error, peer);
      if (error instanceof DomainError && error.kind === 'unauthenticated') {
        const response = standard(httpStatusOf(error), error.message);
        response.headers.set('www-authenticate', `Bearer realm="${REALM}", error="invalid_token"`);
        throw new HttpResponseError(response);
      }
      throw error;
    }
  };

  const options = (summary: string) => ({
    parse: 'none' as const,
    response: { 201: ConnectionView, ...COMPLETE_ERRORS },
    detail: { summary, requestBody: MATERIAL_BODY, security: [{ syncToken: [] }] },
  });

  return new Elysia({ name: 'routes.sync-session', detail: { tags: ['Connections'] } })
    .post(
      SYNC_COMPLETE_PATH,
      ({ request, set, server }) => complete('pair', request, set, server?.requestIP(request)?.address),
      options(
        'Complete the pairing of a new connection with the account’s session material (bearer: sync token). Answers the connection once its session opened (up to 5 s), else CONNECTING.',
      ),
    )
    .post(
      SYNC_RECONNECT_PATH,
      ({ request, set, server }) => complete('reconnect', request, set, server?.requestIP(request)?.address),
      options(
        'Re-pair a connection that was paired before (logged out, dropped) with session material of the same number (bearer: sync token). A CONNECTED connection answers 409: disconnect or log it out first.',
      ),
    );
}

function bearerToken(request: Request): string | undefined {
  const header = request.headers.get('authorization') ?? '';
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

async function materialBody(request: Request, limit: number): Promise<{ material: unknown; connectionId?: string }> {
  const type = request.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json') throw badRequest(['The session material must be sent as JSON (Content-Type: application/json)']);
  const text = await readText(request, limit);
  const body = text.trim() === '' ? {} : parseJsonText(text);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest(['body must be a JSON object']);
  const { connectionId, ...material } = body as Record<string, unknown>;
  if (connectionId !== undefined && typeof connectionId !== 'string') throw badRequest(['body.connectionId must be a string']);
  return { material, connectionId };
}

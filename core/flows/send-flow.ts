import type { Actor } from '../identity/identity.ts';
import { authorize } from '../identity/roles.ts';
import { connectionNotFound } from '../connections/connections.ts';
import type { ChatMessage } from '../messaging/message.ts';
import type { FlowContent } from '../messaging/outgoing.ts';
import { acceptSend, type SendDeps, type SendStores } from '../messaging/send.ts';
import { badRequest, DomainError } from '../shared/errors.ts';
import type { IdGen } from '../shared/ports.ts';

/** Prefix of generated Flow tokens: `flow_<uuid>` (spec 4.3: "one of shape `<prefix>_<uuid>`"). */
export const FLOW_TOKEN_PREFIX = 'flow';

export function generateFlowToken(ids: IdGen): string {
  return `${FLOW_TOKEN_PREFIX}_${ids.next()}`;
}

export interface SendFlowBody {
  to: unknown;
  header?: unknown;
  body?: unknown;
  footer?: unknown;
  cta?: unknown;
  flowId?: unknown;
  flowAction?: unknown;
  screen?: unknown;
  data?: unknown;
  flowToken?: unknown;
  mode?: unknown;
}

/**
 * Reads a `send-flow` request (spec 4.3): every problem at once. `navigate` needs the first
 * `screen`; `data_exchange` asks the endpoint for it (INIT), so `screen` and `data` are refused.
 * A missing `flowToken` is generated.
 */
export function parseSendFlow(body: SendFlowBody, ids: IdGen): FlowContent {
  const problems: string[] = [];
  const text = (value: unknown, field: string, max: number, required: boolean): string | undefined => {
    if (value === undefined || value === null) {
      if (required) problems.push(`body.${field} must be a non-empty string`);
      return undefined;
    }
    if (typeof value !== 'string' || !value.trim()) problems.push(`body.${field} must be a non-empty string`);
    else if (value.length > max) problems.push(`body.${field} must be at most ${max} characters`);
    else return value;
    return undefined;
  };
  const flowId = text(body.flowId, 'flowId', 64, true);
  if (flowId !== undefined && !/^\d+$/.test(flowId)) problems.push('body.flowId must be the platform’s Flow id (digits)');
  const messageBody = text(body.body, 'body', 1024, true);
  const cta = text(body.cta, 'cta', 30, true);
  const header = text(body.header, 'header', 60, false);
  const footer = text(body.footer, 'footer', 60, false);
  const flowToken = text(body.flowToken, 'flowToken', 200, false) ?? generateFlowToken(ids);
  const flowAction = body.flowAction ?? 'navigate';
  if (flowAction !== 'navigate' && flowAction !== 'data_exchange') problems.push('body.flowAction must be navigate or data_exchange');
  const mode = body.mode ?? 'published';
  if (mode !== 'published' && mode !== 'draft') problems.push('body.mode must be published or draft');
  const screen = text(body.screen, 'screen', 100, flowAction === 'navigate');
  if (body.data !== undefined && (typeof body.data !== 'object' || body.data === null || Array.isArray(body.data))) problems.push('body.data must be an object');
  if (flowAction === 'data_exchange' && (body.screen !== undefined || body.data !== undefined)) {
    problems.push('body.screen and body.data are for navigate Flows; a data_exchange Flow asks its endpoint for the first screen');
  }
  if (problems.length > 0) throw badRequest(problems);
  const content: FlowContent = { flowId: flowId!, flowToken, flowAction: flowAction as FlowContent['flowAction'], body: messageBody!, cta: cta!, mode: mode as FlowContent['mode'] };
  if (header) content.header = header;
  if (footer) content.footer = footer;
  if (screen) content.screen = screen;
  if (body.data !== undefined) content.data = body.data as Record<string, unknown>;
  return content;
}

/**
 * Sends a Flow: refused on a connection whose network has no Flows (spec 4.3: "a Flow is
 * refused" on unofficial connections), then the ordinary send path (credit, window, queue).
 */
export async function sendFlow(
  stores: SendStores,
  deps: SendDeps,
  actor: Actor,
  connectionId: string,
  body: SendFlowBody,
  options: { idempotencyKey?: string } = {},
): Promise<{ message: ChatMessage; created: boolean; flowToken: string }> {
  authorize(actor.roles, 'messages.send', 'write');
  const connection = await stores.connections.get(actor.workspaceId, connectionId);
  if (!connection) throw connectionNotFound(connectionId);
  if (!deps.drivers.get(connection.driver)?.capabilities.flows) {
    throw new DomainError('unprocessable', 'Flows can only be sent on official connections');
  }
  const flow = parseSendFlow(body, deps.ids);
  const sent = await acceptSend(stores, deps, actor, connectionId, { to: body.to, content: { kind: 'flow', flow }, idempotencyKey: options.idempotencyKey });
  const content = sent.message.content as { kind: string; flow?: FlowContent };
  return { ...sent, flowToken: content.flow?.flowToken ?? flow.flowToken };
}

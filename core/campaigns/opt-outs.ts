import type { Actor } from '../identity/identity.ts';
import { authorize } from '../identity/roles.ts';
import { badRequest, notFound } from '../shared/errors.ts';
import type { Page, PageRequest } from '../shared/pagination.ts';
import type { Clock } from '../shared/ports.ts';
import { normalizePhone } from './audience.ts';
import type { OptOut, OptOutStore } from './campaign.ts';

/**
 * The workspace's opt-out list: numbers that receive no campaign. Contacts join it by replying a
 * stop word; a person may add a number (an opt-out received elsewhere) or remove one (the contact
 * asked to receive campaigns again).
 */
export async function listOptOuts(store: OptOutStore, actor: Actor, request: PageRequest): Promise<Page<OptOut>> {
  authorize(actor.roles, 'messages.send', 'read');
  return store.list(actor.workspaceId, request);
}

export async function addOptOut(store: OptOutStore, deps: { clock: Clock }, actor: Actor, input: { phone: unknown; reason?: string }): Promise<OptOut> {
  authorize(actor.roles, 'messages.send', 'write');
  const phone = normalizePhone(input.phone);
  if (!phone) throw badRequest(['body.phone must be a phone number in international format (E.164)']);
  const reason = (input.reason ?? 'added by hand').trim().slice(0, 200) || 'added by hand';
  const createdAt = deps.clock.now();
  await store.add(actor.workspaceId, phone, createdAt, reason);
  return { phone, reason, createdAt };
}

export async function removeOptOut(store: OptOutStore, actor: Actor, input: string): Promise<void> {
  authorize(actor.roles, 'messages.send', 'write');
  const phone = normalizePhone(input);
  if (!phone || !(await store.remove(actor.workspaceId, phone))) throw notFound(`${input} is not on the opt-out list`);
}

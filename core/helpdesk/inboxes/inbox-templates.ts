import type { Actor } from '../../identity/identity.ts';
import { driverView } from '../../messaging/deliver.ts';
import { syncTemplates } from '../../templates/template-list.ts';
import { isSendable } from '../../templates/template-status.ts';
import type { Template, TemplateDeps, TemplateStores } from '../../templates/templates.ts';
import { visibleInbox, type InboxStores } from './inboxes.ts';

export type InboxTemplateStores = Pick<InboxStores, 'inboxes'> & TemplateStores;
export type InboxTemplateDeps = Pick<TemplateDeps, 'clock' | 'ids' | 'drivers'>;

/**
 * `GET /v3/helpdesk/inboxes/{id}/templates`: the templates a member who works the inbox can
 * send from it — the APPROVED templates of its connection, by name. Agents do not read
 * connections (the roles matrix keeps `connections` from them), yet an official connection
 * whose 24-hour window closed takes only a template (spec 3.4), so working an inbox must be
 * enough to pick one. Visibility is the inbox's (an Agent outside it gets 404). An inbox on a
 * network without templates (unofficial connections, API inboxes, a deleted connection)
 * answers an empty list, not an error: there is simply nothing to pick (`official: false` tells
 * it from an official connection with no approved template yet).
 *
 * The platform is read first, as the connection's own template list does, so a template
 * approved a minute ago is offered; when it cannot be reached the last known list answers.
 */
export async function listInboxTemplates(stores: InboxTemplateStores, deps: InboxTemplateDeps, actor: Actor, inboxId: string): Promise<{ official: boolean; templates: Template[] }> {
  const inbox = await visibleInbox(stores, actor, inboxId);
  const none = { official: false, templates: [] };
  if (inbox.connectionId === null) return none;
  const connection = await stores.connections.get(actor.workspaceId, inbox.connectionId);
  if (!connection) return none;
  const driver = deps.drivers.get(connection.driver);
  if (!driver?.capabilities.templates || !driver.templates) return none;
  await syncTemplates(stores, deps, connection, driver.templates, driverView(connection));
  const templates = await stores.templates.all(connection.id);
  const sendable = templates.filter((t) => isSendable(t.status)).sort((a, b) => a.name.localeCompare(b.name) || a.language.localeCompare(b.language));
  return { official: true, templates: sendable };
}

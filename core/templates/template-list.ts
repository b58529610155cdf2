import type { Connection } from '../connections/connection.ts';
import { DriverError, type DriverConnection } from '../connections/driver.ts';
import type { Actor } from '../identity/identity.ts';
import { authorize } from '../identity/roles.ts';
import type { Page, PageRequest } from '../shared/pagination.ts';
import type { PlatformTemplate, TemplatePlatform } from './platform.ts';
import { reasonFor } from './template-status.ts';
import { templateConnection, type Template, type TemplateDeps, type TemplateStores } from './templates.ts';

/**
 * The templates of a connection (spec 4.3 `GET /v3/connections/{id}/templates`). The first page
 * reads the platform first, so templates made elsewhere (the platform's own manager, another
 * tool) appear and statuses are current; the following pages read what that read stored, so
 * paging stays stable. When the platform cannot be reached the last known list is answered.
 */
export async function listTemplates(stores: TemplateStores, deps: TemplateDeps, actor: Actor, connectionId: string, request: PageRequest): Promise<Page<Template>> {
  authorize(actor.roles, 'connections', 'read');
  const { connection, platform, view } = await templateConnection(stores, deps, actor, connectionId);
  if (request.page <= 1) await syncTemplates(stores, deps, connection, platform, view);
  return stores.templates.list(connection.id, request);
}

/**
 * Makes the stored templates of a connection what the platform has: new ones added, changed
 * ones updated (the platform's status is the truth, as when polling), and those gone from the
 * platform removed — except any changed after the platform was read (a callback or a create
 * racing the sync is newer than what was read).
 * Answers false when the platform could not be read (nothing changed).
 */
export async function syncTemplates(
  stores: TemplateStores,
  deps: Pick<TemplateDeps, 'clock' | 'ids'>,
  connection: Connection,
  platform: TemplatePlatform,
  view: DriverConnection,
): Promise<boolean> {
  const readAt = deps.clock.now();
  let current: PlatformTemplate[];
  try {
    current = await platform.list(view);
  } catch (error) {
    if (error instanceof DriverError) return false;
    throw error;
  }
  const stored = await stores.templates.all(connection.id);
  const byExternalId = new Map(stored.map((t) => [t.externalId, t]));
  const byName = new Map(stored.map((t) => [nameKey(t), t]));
  const kept = new Set<string>();
  for (const found of current) {
    const known = byExternalId.get(found.externalId) ?? byName.get(nameKey(found));
    if (known) kept.add(known.id);
    // Changed here after the platform was read (a callback, a create): newer than this read.
    if (known && known.updatedAt >= readAt) continue;
    const next = fromPlatform(found, known, connection, deps.ids.next(), readAt);
    if (!known || changed(known, next)) await stores.templates.upsert(next);
  }
  for (const template of stored) {
    if (!kept.has(template.id) && template.updatedAt < readAt) await stores.templates.delete(template.id);
  }
  return true;
}

function fromPlatform(found: PlatformTemplate, known: Template | undefined, connection: Connection, newId: string, now: Date): Template {
  const status = found.status ?? known?.status ?? 'PENDING';
  return {
    id: known?.id ?? newId,
    workspaceId: connection.workspaceId,
    connectionId: connection.id,
    externalId: found.externalId,
    name: found.name,
    language: found.language,
    category: found.category ?? known?.category ?? '',
    components: found.components ?? known?.components ?? [],
    status,
    rejectedReason: found.status ? reasonFor(status, found.rejectedReason) : (known?.rejectedReason ?? null),
    createdAt: known?.createdAt ?? now,
    updatedAt: now,
  };
}

function changed(before: Template, after: Template): boolean {
  return (
    before.externalId !== after.externalId ||
    before.status !== after.status ||
    before.rejectedReason !== after.rejectedReason ||
    before.category !== after.category ||
    JSON.stringify(before.components) !== JSON.stringify(after.components)
  );
}

const nameKey = (t: { name: string; language: string }) => `${t.language}\u0000${t.name}`;

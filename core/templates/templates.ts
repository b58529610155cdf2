import type { RecordWrites } from '../shared/workspace-records.ts';
import type { ConnectionStore } from '../connections/connection.ts';
import { assertMediaFits, mediaKindOfType } from '../media/media-limits.ts';
import { connectionNotFound } from '../connections/connections.ts';
import { DriverError, type NetworkDriver } from '../connections/driver.ts';
import { driverView } from '../messaging/deliver.ts';
import type { Actor } from '../identity/identity.ts';
import { authorize } from '../identity/roles.ts';
import { badRequest, conflict, DomainError, notFound, unprocessable } from '../shared/errors.ts';
import type { Page, PageRequest } from '../shared/pagination.ts';
import type { Clock, IdGen } from '../shared/ports.ts';
import type { TemplateComponentRules } from './component-rules.ts';
import { checkDefinition } from './components.ts';
import type { PlatformTemplate, TemplateStatusUpdate, UploadedFile } from './platform.ts';
import { checkTemplateSendOn } from './template-send.ts';
import { afterCallback, reasonFor, templateEventEffect, type TemplateStatus } from './template-status.ts';
import { isUuid } from '../shared/ids.ts';

/** A template of a connection (its business account), as this service keeps it. */
export interface Template {
  id: string;
  workspaceId: string;
  connectionId: string;
  /** The platform's id of the template. */
  externalId: string;
  name: string;
  language: string;
  category: string;
  components: unknown[];
  status: TemplateStatus;
  rejectedReason: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface TemplateStore extends RecordWrites<Template> {
  list(connectionId: string, request: PageRequest): Promise<Page<Template>>;
  /** Every template of the connection (for reconciling with the platform). */
  all(connectionId: string): Promise<Template[]>;
  /** Inserts, or replaces the row of the same connection, name and language (a concurrent sync never collides). */
  upsert(template: Template): Promise<void>;
  get(connectionId: string, id: string): Promise<Template | undefined>;
  findByExternalId(connectionId: string, externalId: string): Promise<Template | undefined>;
  /** The same, locked until the transaction ends: concurrent callbacks of one template apply one after the other. */
  lockByExternalId(connectionId: string, externalId: string): Promise<Template | undefined>;
  findByName(connectionId: string, name: string, language: string): Promise<Template | undefined>;
}

export interface TemplateStores {
  connections: ConnectionStore;
  templates: TemplateStore;
}

export interface TemplateDeps {
  clock: Clock;
  ids: IdGen;
  drivers: ReadonlyMap<string, NetworkDriver>;
  /** Component types the enabled plugins teach (`CAROUSEL`). */
  rules?: TemplateComponentRules;
}

/** A sending media id lives about 30 days on the platform (spec 4.3, 8). */
export const SEND_MEDIA_DAYS = 30;


/** The connection and its driver's template capability; 422 where the network has no templates. */
export async function templateConnection(stores: TemplateStores, deps: TemplateDeps, actor: Actor, connectionId: string) {
  const connection = await stores.connections.get(actor.workspaceId, connectionId);
  if (!connection) throw connectionNotFound(connectionId);
  const driver = deps.drivers.get(connection.driver);
  if (!driver?.capabilities.templates || !driver.templates) {
    throw unprocessable('Templates exist only on official connections: this connection’s network has no pre-approved templates');
  }
  return { connection, platform: driver.templates, view: driverView(connection) };
}

/** A platform failure as the caller sees it: a refusal is 400 with the platform's words; trouble reaching it is 502. */
export function platformFailure(error: unknown): unknown {
  if (!(error instanceof DriverError)) return error;
  return new DomainError(error.retryable ? 'upstream_failed' : 'invalid_input', error.message);
}

export async function onPlatform<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw platformFailure(error);
  }
}

async function findTemplate(stores: TemplateStores, connectionId: string, templateId: string): Promise<Template> {
  // Our id (a UUID) or the platform's id: both are accepted.
  const found = isUuid(templateId) ? await stores.templates.get(connectionId, templateId) : await stores.templates.findByExternalId(connectionId, templateId);
  if (!found) throw notFound(`No template ${templateId} on this connection`);
  return found;
}

/**
 * One template, refreshed from the platform (polling: spec 3.5 "polling `GET
 * /templates/{templateId}` reaches `APPROVED`"). The platform's status is the truth. When the
 * platform cannot be reached the last known status is answered.
 */
export async function getTemplate(stores: TemplateStores, deps: TemplateDeps, actor: Actor, connectionId: string, templateId: string): Promise<Template> {
  authorize(actor.roles, 'connections', 'read');
  const { connection, platform, view } = await templateConnection(stores, deps, actor, connectionId);
  const template = await findTemplate(stores, connection.id, templateId);
  let current: PlatformTemplate | undefined;
  try {
    current = await platform.get(view, template.externalId);
  } catch (error) {
    if (error instanceof DriverError) return template;
    throw error;
  }
  if (!current) {
    await stores.templates.delete(template.id);
    throw notFound(`Template ${templateId} no longer exists on the platform`);
  }
  return refreshFromPlatform(stores, deps, template, current);
}

/** Takes the platform's view as is (polling). */
export async function refreshFromPlatform(stores: TemplateStores, deps: Pick<TemplateDeps, 'clock'>, template: Template, current: PlatformTemplate): Promise<Template> {
  const status = current.status ?? template.status;
  const rejectedReason = current.status ? reasonFor(status, current.rejectedReason) : template.rejectedReason;
  const category = current.category ?? template.category;
  if (status === template.status && rejectedReason === template.rejectedReason && category === template.category) return template;
  const updated: Template = { ...template, status, rejectedReason, category, updatedAt: deps.clock.now() };
  await stores.templates.update(updated);
  return updated;
}

export interface CreateTemplateInput {
  name: unknown;
  language: unknown;
  category: unknown;
  components: unknown;
}

/** Validates the definition (every problem at once), submits it, keeps it as the platform answers (PENDING). */
export async function createTemplate(stores: TemplateStores, deps: TemplateDeps, actor: Actor, connectionId: string, input: CreateTemplateInput): Promise<Template> {
  authorize(actor.roles, 'connections', 'write');
  const { connection, platform, view } = await templateConnection(stores, deps, actor, connectionId);
  const problems = checkDefinition(input, deps.rules);
  if (problems.length > 0) throw badRequest(problems);
  const definition = { name: input.name as string, language: input.language as string, category: input.category as string, components: input.components as unknown[] };
  if (await stores.templates.findByName(connection.id, definition.name, definition.language)) {
    throw conflict(`A template ${definition.name} in ${definition.language} already exists on this connection`);
  }
  const created = await onPlatform(() => platform.create(view, definition));
  const now = deps.clock.now();
  const template: Template = {
    id: deps.ids.next(),
    workspaceId: connection.workspaceId,
    connectionId: connection.id,
    externalId: created.externalId,
    ...definition,
    category: created.category ?? definition.category,
    status: created.status,
    rejectedReason: reasonFor(created.status, null),
    createdAt: now,
    updatedAt: now,
  };
  await stores.templates.insert(template);
  return template;
}

export async function deleteTemplate(stores: TemplateStores, deps: TemplateDeps, actor: Actor, connectionId: string, templateId: string): Promise<void> {
  authorize(actor.roles, 'connections', 'write');
  const { connection, platform, view } = await templateConnection(stores, deps, actor, connectionId);
  const template = await findTemplate(stores, connection.id, templateId);
  await onPlatform(() => platform.delete(view, { name: template.name, externalId: template.externalId }));
  await stores.templates.delete(template.id);
}

/** Header example media for a definition: a permanent handle for `example.header_handle`. */
export async function uploadHeaderMedia(stores: TemplateStores, deps: TemplateDeps, actor: Actor, connectionId: string, file: UploadedFile): Promise<{ handle: string }> {
  authorize(actor.roles, 'connections', 'write');
  const { platform, view } = await templateConnection(stores, deps, actor, connectionId);
  checkUpload(file, HEADER_MEDIA_TYPES, 'header-media');
  return onPlatform(() => platform.uploadHeaderMedia(view, file));
}

/** Media to send in a template: a media id bound to the number, valid about 30 days. */
export async function uploadSendMedia(
  stores: TemplateStores,
  deps: TemplateDeps,
  actor: Actor,
  connectionId: string,
  file: UploadedFile,
): Promise<{ mediaId: string; expiresAt: Date }> {
  authorize(actor.roles, 'messages.send', 'write');
  const { platform, view } = await templateConnection(stores, deps, actor, connectionId);
  checkUpload(file, SEND_MEDIA_TYPES, 'send-media');
  const { mediaId } = await onPlatform(() => platform.uploadSendMedia(view, file));
  return { mediaId, expiresAt: new Date(deps.clock.now().getTime() + SEND_MEDIA_DAYS * 86_400_000) };
}

/** The types the platform takes for header examples (resumable upload) and for sending media; sizes are media-limits.ts's. */
const HEADER_MEDIA_TYPES = ['image/jpeg', 'image/png', 'video/mp4', 'application/pdf'];
const SEND_MEDIA_TYPES = ['image/jpeg', 'image/png', 'video/mp4', 'video/3gpp', 'application/pdf'];

function checkUpload(file: UploadedFile, types: readonly string[], what: string): void {
  if (!types.includes(file.mimetype)) throw badRequest([`file: ${what} takes ${types.join(', ')}; ${file.mimetype || 'no type'} given`]);
  if (file.bytes.length === 0) throw badRequest(['file: is empty']);
  // 413 naming the kind and its limit, as every media upload (image 5 MB, video 16 MB, document 100 MB).
  assertMediaFits(mediaKindOfType(file.mimetype), file.bytes);
}

/**
 * A status callback (`message_template_status_update`): moves the template along the
 * transition table; an event the table does not allow from the current status is ignored
 * (late or out of order). Templates this service does not know are ignored too.
 */
export async function applyTemplateCallback(
  stores: Pick<TemplateStores, 'templates'>,
  deps: Pick<TemplateDeps, 'clock'>,
  connectionId: string,
  update: TemplateStatusUpdate,
): Promise<Template | undefined> {
  const template = await stores.templates.lockByExternalId(connectionId, update.externalId);
  if (!template) return undefined;
  const effect = templateEventEffect(update.event);
  if (effect.kind === 'deleted') {
    await stores.templates.delete(template.id);
    return undefined;
  }
  if (effect.kind === 'none') return template;
  const { status, moved } = afterCallback(template.status, effect.status);
  if (!moved) return template;
  const updated: Template = { ...template, status, rejectedReason: reasonFor(status, update.reason), updatedAt: deps.clock.now() };
  await stores.templates.update(updated);
  return updated;
}

/**
 * Before a template send goes out (core/templates/template-send.ts): a known template must be
 * APPROVED and the components must fit it. `acceptSend` applies the rule to every send; this
 * is the same check by connection id, for callers outside a send.
 */
export async function checkTemplateSend(
  stores: TemplateStores,
  deps: Pick<TemplateDeps, 'rules'>,
  actor: Actor,
  connectionId: string,
  send: { name: unknown; language: unknown; components?: unknown },
): Promise<void> {
  if (typeof send.name !== 'string' || typeof send.language !== 'string') return;
  const connection = await stores.connections.get(actor.workspaceId, connectionId);
  if (!connection) return;
  await checkTemplateSendOn(stores.templates, deps.rules, connection.id, { name: send.name, language: send.language, components: send.components });
}

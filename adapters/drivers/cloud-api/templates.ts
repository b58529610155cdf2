import { DriverError, type DriverConnection } from '../../../core/connections/driver.ts';
import type { PlatformTemplate, TemplatePlatform, UploadedFile } from '../../../core/templates/platform.ts';
import { isTemplateStatus, type TemplateStatus } from '../../../core/templates/template-status.ts';
import { readCredentials } from './credentials.ts';
import { graphError, networkError } from './errors.ts';
import type { GraphClientOptions } from './graph-client.ts';

/**
 * Message templates on the Graph API (the business account's `message_templates` edge):
 *
 * - `POST   /{waba-id}/message_templates`                 `{ name, language, category, components }` → `{ id, status, category }`
 * - `GET    /{waba-id}/message_templates?fields=…&limit=&after=`  every template, page by page (`paging.next`, `cursors.after`)
 * - `GET    /{template-id}?fields=…`                       the template with `status` and `rejected_reason`
 * - `DELETE /{waba-id}/message_templates?name=&hsm_id=`    → `{ success: true }`
 * - header examples by the Resumable Upload API: `GET /app` (the token's app id), then
 *   `POST /{app-id}/uploads?file_length&file_type&file_name` → `{ id: "upload:…" }`, then
 *   `POST /{upload-id}` with header `file_offset: 0` and the raw bytes → `{ h }` (the handle)
 * - media to send: `POST /{phone-number-id}/media` (multipart) → `{ id }`
 */
export function createCloudApiTemplates(options: GraphClientOptions): TemplatePlatform {
  const root = `${options.baseUrl.replace(/\/+$/, '')}/${options.apiVersion}`;

  async function call<T>(connection: DriverConnection, method: string, path: string, action: string, init: { json?: unknown; body?: BodyInit; headers?: Record<string, string> } = {}): Promise<T> {
    const { accessToken } = readCredentials(connection);
    const headers = new Headers(init.headers);
    headers.set('authorization', `Bearer ${accessToken}`);
    let body = init.body;
    if (init.json !== undefined) {
      body = JSON.stringify(init.json);
      headers.set('content-type', 'application/json');
    }
    let response: Response;
    try {
      response = await options.fetch(`${root}/${path}`, { method, headers, body, signal: AbortSignal.timeout(options.timeoutMs) });
    } catch (cause) {
      throw networkError(cause, action);
    }
    if (!response.ok) throw await graphError(response, action);
    const text = await response.text();
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new DriverError(`${action} failed: the answer is not JSON`, 'BAD_RESPONSE', true);
    }
  }

  const waba = (connection: DriverConnection) => {
    const { businessAccountId } = readCredentials(connection);
    if (!businessAccountId) throw new DriverError('The connection has no businessAccountId: templates belong to the WhatsApp Business Account', 'CREDENTIALS_MISSING', false);
    return encodeURIComponent(businessAccountId);
  };

  return {
    async create(connection, definition) {
      const answer = await call<{ id?: unknown; status?: unknown; category?: unknown }>(connection, 'POST', `${waba(connection)}/message_templates`, 'Creating the template', {
        json: definition,
      });
      if (typeof answer.id !== 'string' && typeof answer.id !== 'number') throw new DriverError('Creating the template failed: the answer has no id', 'BAD_RESPONSE', false);
      return { externalId: String(answer.id), status: statusOf(answer.status, 'PENDING'), category: typeof answer.category === 'string' ? answer.category : null };
    },

    async list(connection) {
      const all: PlatformTemplate[] = [];
      let after: string | undefined;
      for (let pages = 0; pages < MAX_LIST_PAGES; pages++) {
        const query = `fields=${TEMPLATE_FIELDS}&limit=100${after ? `&after=${encodeURIComponent(after)}` : ''}`;
        const answer = await call<{ data?: unknown; paging?: { next?: unknown; cursors?: { after?: unknown } } }>(
          connection,
          'GET',
          `${waba(connection)}/message_templates?${query}`,
          'Listing the templates',
        );
        for (const node of Array.isArray(answer.data) ? answer.data : []) {
          if (typeof node !== 'object' || node === null || (typeof (node as any).id !== 'string' && typeof (node as any).id !== 'number')) continue;
          if (GONE.has(String((node as any).status).toUpperCase())) continue;
          all.push(toPlatformTemplate(node as Record<string, unknown>, String((node as any).id)));
        }
        const next = answer.paging?.cursors?.after;
        if (!answer.paging?.next || typeof next !== 'string' || !next) return all;
        after = next;
      }
      throw new DriverError(`Listing the templates failed: more than ${MAX_LIST_PAGES} pages`, 'TOO_MANY_TEMPLATES', false);
    },

    async get(connection, externalId) {
      try {
        const node = await call<Record<string, unknown>>(
          connection,
          'GET',
          `${encodeURIComponent(externalId)}?fields=${TEMPLATE_FIELDS}`,
          'Reading the template',
        );
        if (GONE.has(String(node.status).toUpperCase())) return undefined;
        return toPlatformTemplate(node, externalId);
      } catch (error) {
        // Code 100 with "does not exist" (GraphMethodException, subcode 33): the template is gone.
        if (error instanceof DriverError && error.code === 100 && /does not exist/i.test(error.message)) return undefined;
        throw error;
      }
    },

    async delete(connection, template) {
      const query = `name=${encodeURIComponent(template.name)}&hsm_id=${encodeURIComponent(template.externalId)}`;
      await call(connection, 'DELETE', `${waba(connection)}/message_templates?${query}`, 'Deleting the template');
    },

    async uploadHeaderMedia(connection, file: UploadedFile) {
      const app = await call<{ id?: unknown }>(connection, 'GET', 'app', 'Reading the app of the access token');
      if (typeof app.id !== 'string' || !app.id) throw new DriverError('Reading the app failed: the answer has no id', 'BAD_RESPONSE', true);
      const query = `file_length=${file.bytes.length}&file_type=${encodeURIComponent(file.mimetype)}&file_name=${encodeURIComponent(file.fileName)}`;
      const session = await call<{ id?: unknown }>(connection, 'POST', `${encodeURIComponent(app.id)}/uploads?${query}`, 'Starting the upload session');
      if (typeof session.id !== 'string' || !session.id.startsWith('upload:')) throw new DriverError('Starting the upload session failed: the answer has no upload id', 'BAD_RESPONSE', true);
      // The session id is used as is (it may carry its own `?sig=` query).
      const uploaded = await call<{ h?: unknown }>(connection, 'POST', session.id, 'Uploading the header media', {
        body: file.bytes as Uint8Array<ArrayBuffer>,
        headers: { file_offset: '0', 'content-type': file.mimetype },
      });
      if (typeof uploaded.h !== 'string' || !uploaded.h) throw new DriverError('Uploading the header media failed: the answer has no handle', 'BAD_RESPONSE', true);
      return { handle: uploaded.h };
    },

    async uploadSendMedia(connection, file: UploadedFile) {
      const { phoneNumberId } = readCredentials(connection);
      const form = new FormData();
      form.append('messaging_product', 'whatsapp');
      form.append('type', file.mimetype);
      form.append('file', new Blob([file.bytes as Uint8Array<ArrayBuffer>], { type: file.mimetype }), file.fileName);
      const answer = await call<{ id?: unknown }>(connection, 'POST', `${encodeURIComponent(phoneNumberId)}/media`, 'Uploading the media', { body: form });
      if (typeof answer.id !== 'string' || !answer.id) throw new DriverError('Uploading the media failed: the answer has no media id', 'BAD_RESPONSE', true);
      return { mediaId: answer.id };
    },
  };
}

const TEMPLATE_FIELDS = 'id,name,language,category,status,rejected_reason,components';
/** 100 templates a page: far above a business account's template limit. */
const MAX_LIST_PAGES = 100;
/** Statuses of a template on its way out: as good as deleted. */
const GONE = new Set(['DELETED', 'PENDING_DELETION']);

function statusOf(value: unknown, fallback: TemplateStatus): TemplateStatus {
  return knownStatus(value) ?? fallback;
}

function knownStatus(value: unknown): TemplateStatus | null {
  const upper = typeof value === 'string' ? value.toUpperCase() : '';
  return isTemplateStatus(upper) ? upper : null;
}

function toPlatformTemplate(node: Record<string, unknown>, externalId: string): PlatformTemplate {
  return {
    externalId: String(node.id ?? externalId),
    name: String(node.name ?? ''),
    language: String(node.language ?? ''),
    category: typeof node.category === 'string' ? node.category : null,
    status: knownStatus(node.status),
    rejectedReason: typeof node.rejected_reason === 'string' ? node.rejected_reason : null,
    components: Array.isArray(node.components) ? node.components : null,
  };
}

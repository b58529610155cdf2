import { createHmac, randomBytes, randomInt } from 'node:crypto';
import type { GraphSimulator } from './graph-simulator.ts';

/**
 * Teaches the Graph simulator message templates and the Resumable Upload API:
 *
 * - `POST   /{waba-id}/message_templates`                → `{ id, status: "PENDING", category }`
 * - `GET    /{waba-id}/message_templates?name=&limit=&after=` → `{ data: [...], paging }` (cursor paging)
 * - `GET    /{template-id}`                              → `{ id, name, language, status, category, components, rejected_reason }`
 * - `DELETE /{waba-id}/message_templates?name=&hsm_id=`  → `{ success: true }`
 * - `GET    /app`                                        → `{ id, name }` (the token's app)
 * - `POST   /{app-id}/uploads?file_length&file_type`     → `{ id: "upload:…?sig=…" }`
 * - `POST   /upload:…` (header `file_offset`, raw bytes) → `{ h }`; `GET /upload:…` → `{ id, file_offset }`
 * - a template send (`POST /{phone-number-id}/messages`, `type: template`) of a template that
 *   does not exist or is not APPROVED is refused with 132001, as the platform does.
 *
 * Test hooks: `approve(id)`, `reject(id, reason)`, `pause(id)` change the status and post the
 * signed `message_template_status_update` callback to `sim.callbackUrl`; `setStatus` changes it
 * silently (for polling).
 */
export interface SimTemplate {
  id: string;
  name: string;
  language: string;
  category: string;
  components: unknown[];
  status: string;
  rejected_reason: string;
}

export function teachTemplates(sim: GraphSimulator) {
  const graphId = () => `${randomInt(1, 10)}${String(randomInt(0, 100_000_000_000_000)).padStart(14, '0')}`;
  const appId = graphId();
  const templates = new Map<string, SimTemplate>();
  const uploads = new Map<string, { length: number; type: string; received: Uint8Array }>();
  const handles = new Map<string, { bytes: Uint8Array; type: string }>();
  const id = graphId;
  let listOutage = false;
  const invalid = (message: string) => sim.graphError(400, 100, `(#100) ${message}`);

  sim.extend({
    async handle(request, parts, url) {
      const [node, edge] = parts;
      if (node === sim.businessAccountId && edge === 'message_templates' && parts.length === 2) {
        if (request.method === 'POST') return create((await request.json()) as Record<string, any>);
        if (request.method === 'GET') {
          if (listOutage) return sim.graphError(503, 2, 'Service temporarily unavailable');
          const name = url.searchParams.get('name');
          const all = [...templates.values()].filter((t) => !name || t.name === name);
          // The platform's cursor paging: `limit` (default 25), `after`; `next` only while more remain.
          const limit = Math.min(Number(url.searchParams.get('limit') ?? 25) || 25, 1000);
          const after = url.searchParams.get('after');
          const start = after ? Number(Buffer.from(after, 'base64url').toString()) : 0;
          const data = all.slice(start, start + limit);
          const cursor = (offset: number) => Buffer.from(String(offset)).toString('base64url');
          const paging: Record<string, unknown> = { cursors: { before: cursor(start), after: cursor(start + data.length) } };
          if (start + data.length < all.length) paging.next = `${url.origin}${url.pathname}?limit=${limit}&after=${cursor(start + data.length)}`;
          return Response.json({ data, paging });
        }
        if (request.method === 'DELETE') {
          const name = url.searchParams.get('name');
          const hsmId = url.searchParams.get('hsm_id');
          const found = [...templates.values()].filter((t) => t.name === name && (!hsmId || t.id === hsmId));
          if (!name || found.length === 0) return sim.graphError(400, 100, `(#100) Message template "${name}" not found`);
          for (const t of found) templates.delete(t.id);
          return Response.json({ success: true });
        }
      }
      if (parts.length === 1 && node && templates.has(node) && request.method === 'GET') return Response.json(templates.get(node));
      if (parts.length === 1 && node === 'app' && request.method === 'GET') return Response.json({ id: appId, name: 'Switchboard Test App', link: 'https://example.com' });
      if (node === appId && edge === 'uploads' && request.method === 'POST') {
        const length = Number(url.searchParams.get('file_length'));
        const type = url.searchParams.get('file_type') ?? '';
        if (!Number.isInteger(length) || length <= 0) return invalid('The parameter file_length is required.');
        if (!['image/jpeg', 'image/jpg', 'image/png', 'video/mp4', 'application/pdf'].includes(type)) return invalid('Param file_type must be one of {application/pdf, image/jpeg, image/jpg, image/png, video/mp4}.');
        const session = `upload:${randomBytes(24).toString('base64url')}`;
        uploads.set(session, { length, type, received: new Uint8Array(0) });
        return Response.json({ id: `${session}?sig=${randomBytes(12).toString('hex')}` });
      }
      if (parts.length === 1 && node?.startsWith('upload:')) {
        const session = uploads.get(node);
        if (!session) return sim.graphError(400, 100, '(#100) Invalid upload session');
        if (request.method === 'GET') return Response.json({ id: node, file_offset: session.received.length });
        const offset = Number(request.headers.get('file_offset'));
        if (!Number.isInteger(offset) || offset !== session.received.length) return invalid(`file_offset must be ${session.received.length}`);
        const chunk = new Uint8Array(await request.arrayBuffer());
        const received = new Uint8Array(session.received.length + chunk.length);
        received.set(session.received);
        received.set(chunk, session.received.length);
        session.received = received;
        if (received.length < session.length) return Response.json({ id: node, file_offset: received.length });
        const h = `4::${randomBytes(32).toString('base64url')}`;
        handles.set(h, { bytes: received, type: session.type });
        uploads.delete(node);
        return Response.json({ h });
      }
      if (parts.length === 2 && node === sim.phoneNumberId && edge === 'messages' && request.method === 'POST') {
        const body = (await request.clone().json().catch(() => ({}))) as Record<string, any>;
        if (body.type !== 'template') return undefined;
        const name = body.template?.name;
        const language = body.template?.language?.code;
        const found = [...templates.values()].find((t) => t.name === name && t.language === language);
        if (!found || found.status !== 'APPROVED') {
          return sim.graphError(404, 132001, `(#132001) Template name does not exist in the translation: template name (${name}) does not exist in ${language}`);
        }
      }
      return undefined;
    },
  });

  function create(body: Record<string, any>): Response {
    if (typeof body.name !== 'string' || !/^[a-z0-9_]+$/.test(body.name)) return invalid('Param name must be lower case letters, numbers and underscores.');
    if (typeof body.language !== 'string' || !body.language) return invalid('The parameter language is required.');
    if (!['MARKETING', 'UTILITY', 'AUTHENTICATION'].includes(body.category)) return invalid('Param category must be one of {AUTHENTICATION, MARKETING, UTILITY}.');
    if (!Array.isArray(body.components) || body.components.length === 0) return invalid('The parameter components is required.');
    for (const component of body.components) {
      const handle = component?.example?.header_handle?.[0];
      if (component?.type === 'HEADER' && ['IMAGE', 'VIDEO', 'DOCUMENT'].includes(component.format) && !handles.has(handle)) {
        return invalid('Invalid parameter: example.header_handle is not a valid uploaded file handle.');
      }
    }
    if ([...templates.values()].some((t) => t.name === body.name && t.language === body.language)) {
      return sim.graphError(400, 100, 'Invalid parameter: Content in this language already exists');
    }
    const template: SimTemplate = { id: id(), name: body.name, language: body.language, category: body.category, components: body.components, status: 'PENDING', rejected_reason: 'NONE' };
    templates.set(template.id, template);
    return Response.json({ id: template.id, status: template.status, category: template.category });
  }

  /** The signed callback, as the platform posts it. */
  async function notify(template: SimTemplate, event: string, reason: string) {
    if (!sim.callbackUrl) throw new Error('sim.callbackUrl is not set');
    const rawBody = JSON.stringify({
      object: 'whatsapp_business_account',
      entry: [
        {
          id: sim.businessAccountId,
          time: Math.floor(Date.now() / 1000),
          changes: [
            {
              field: 'message_template_status_update',
              value: {
                event,
                message_template_id: Number(template.id),
                message_template_name: template.name,
                message_template_language: template.language,
                reason,
                message_template_category: template.category,
              },
            },
          ],
        },
      ],
    });
    const signature = `sha256=${createHmac('sha256', sim.appSecret).update(rawBody).digest('hex')}`;
    const response = await fetch(sim.callbackUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature }, body: rawBody });
    return { status: response.status, body: await response.text() };
  }

  function must(templateId: string): SimTemplate {
    const template = templates.get(templateId);
    if (!template) throw new Error(`no template ${templateId} on the simulator`);
    return template;
  }

  return {
    appId,
    templates,
    handles,
    /** A template made elsewhere (the platform's own manager, another tool): no call went through the service. */
    addElsewhere(template: Omit<SimTemplate, 'id' | 'rejected_reason'> & { rejected_reason?: string }): SimTemplate {
      const made: SimTemplate = { id: id(), rejected_reason: 'NONE', ...template };
      templates.set(made.id, made);
      return made;
    },
    /** While on, listing the business account's templates fails (HTTP 503, code 2). */
    setListOutage(on: boolean) {
      listOutage = on;
    },
    /** Changes the status without a callback (found by polling). */
    setStatus(templateId: string, status: string, reason = 'NONE') {
      Object.assign(must(templateId), { status, rejected_reason: reason });
    },
    approve(templateId: string) {
      const template = must(templateId);
      Object.assign(template, { status: 'APPROVED', rejected_reason: 'NONE' });
      return notify(template, 'APPROVED', 'NONE');
    },
    reject(templateId: string, reason: string) {
      const template = must(templateId);
      Object.assign(template, { status: 'REJECTED', rejected_reason: reason });
      return notify(template, 'REJECTED', reason);
    },
    pause(templateId: string) {
      const template = must(templateId);
      Object.assign(template, { status: 'PAUSED', rejected_reason: 'NONE' });
      return notify(template, 'PAUSED', 'NONE');
    },
    /** Posts an event without changing anything (a late or replayed callback). */
    replay: (templateId: string, event: string, reason = 'NONE') => notify(must(templateId), event, reason),
  };
}

export type TemplateSimulator = ReturnType<typeof teachTemplates>;

import { t } from 'elysia';
import { badRequest } from '../../../core/shared/errors.ts';
import { pageRequest } from '../../../core/shared/pagination.ts';
import type { UploadedFile } from '../../../core/templates/platform.ts';
import { TEMPLATE_STATUSES } from '../../../core/templates/template-status.ts';
import { TEMPLATE_CATEGORIES } from '../../../core/templates/components.ts';
import {
  createTemplate,
  deleteTemplate,
  getTemplate,
  uploadHeaderMedia,
  uploadSendMedia,
  type Template,
} from '../../../core/templates/templates.ts';
import { listTemplates } from '../../../core/templates/template-list.ts';
import { templateDeps, templateStores } from '../../connections/template-stores.ts';
import { authenticatedRoutes } from '../route-group.ts';
import { bodyLimits, readMultipart } from '../body.ts';
import type { AppContext } from '../context.ts';
import { authErrors, CodedError, iso, PageOf, PageQuery, presentPage, StandardError, Timestamp, Uuid } from '../schemas.ts';
import { mediaLimitsText } from '../../../core/media/media-limits.ts';

const TemplateView = t.Object({
  id: Uuid,
  connectionId: Uuid,
  externalId: t.String({ description: 'The platform’s id of the template (also accepted as {templateId})' }),
  name: t.String(),
  language: t.String(),
  category: t.String(),
  status: t.String({ description: `One of ${TEMPLATE_STATUSES.join(', ')}` }),
  rejected_reason: t.Nullable(t.String({ description: 'Why the platform rejected it (set only while REJECTED)' })),
  components: t.Array(t.Any()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

const Component = t.Object(
  { type: t.String({ description: 'Upper case: HEADER, BODY, FOOTER, BUTTONS, or a type an enabled plugin teaches (CAROUSEL)' }) },
  { additionalProperties: true },
);

const CreateBody = t.Object({
  name: t.String({ description: 'Lower-case letters, digits and underscores' }),
  language: t.String({ description: 'Language code, such as en_US' }),
  category: t.String({ description: TEMPLATE_CATEGORIES.join(', ') }),
  components: t.Array(Component),
});

/** A multipart upload with its file in the `file` field. */
const MULTIPART_FILE = {
  required: true,
  content: { 'multipart/form-data': { schema: { type: 'object' as const, required: ['file'], properties: { file: { type: 'string' as const, format: 'binary' } } } } },
};

const Params = t.Object({ id: t.String() });
const TemplateParams = t.Object({ id: t.String(), templateId: t.String() });
const errors = { ...authErrors, 404: t.Union([CodedError, StandardError]), 422: StandardError };
const platformErrors = { ...errors, 409: StandardError, 502: StandardError };

/** Templates of an official connection (spec 3.5, 4.3). */
export function templateRoutes(ctx: AppContext) {
  const deps = templateDeps(ctx);
  const mediaLimit = bodyLimits(ctx.config).media;
  const stores = () => templateStores(ctx.db, ctx);

  return authenticatedRoutes(ctx, { name: 'routes.templates', prefix: '/v3/connections/:id/templates', tags: ['Templates'] })
    .get(
      '',
      async ({ actor, params, query }) => presentPage(await listTemplates(stores(), deps, actor, params.id, pageRequest(query)), presentTemplate),
      {
        params: Params,
        query: PageQuery,
        response: { ...errors, 200: PageOf(TemplateView) },
        detail: { summary: 'Templates of the connection, newest first; `s` searches the name. The first page reads the platform first (templates made elsewhere appear, statuses are current; the last known list when the platform is unreachable); later pages read what it stored' },
      },
    )
    .post(
      '',
      async ({ actor, params, body, set }) => {
        const template = await createTemplate(stores(), deps, actor, params.id, body);
        set.status = 201;
        return presentTemplate(template);
      },
      {
        role: ['connections', 'write'],
        params: Params,
        body: CreateBody,
        response: { ...platformErrors, 201: TemplateView },
        detail: {
          summary: 'Submit a template for review; answers it PENDING',
          description:
            'Definition casing is upper case. Every problem of the definition is reported at once (400). The platform’s refusal is 400 with its message; ' +
            'the platform unreachable is 502. The same name and language twice on a connection is 409. 422 on a connection whose network has no templates.',
        },
      },
    )
    .post(
      '/header-media',
      async ({ actor, params, request, set }) => {
        const file = await readFile(request, mediaLimit);
        const { handle } = await uploadHeaderMedia(stores(), deps, actor, params.id, file);
        set.status = 201;
        return { handle };
      },
      {
        role: ['connections', 'write'],
        parse: 'none',
        params: Params,
        response: { ...platformErrors, 201: t.Object({ handle: t.String({ description: 'Permanent; put it in the HEADER’s example.header_handle' }) }), 413: StandardError },
        detail: {
          summary: 'Upload a header example (multipart `file`: JPEG or PNG up to 5 MB, MP4 up to 16 MB, PDF up to 100 MB) → a permanent handle',
          description: `Another type is 400. ${mediaLimitsText()}`,
          requestBody: MULTIPART_FILE,
        },
      },
    )
    .post(
      '/send-media',
      async ({ actor, params, request, set }) => {
        const file = await readFile(request, mediaLimit);
        const { mediaId, expiresAt } = await uploadSendMedia(stores(), deps, actor, params.id, file);
        set.status = 201;
        return { mediaId, expiresAt: iso(expiresAt) };
      },
      {
        role: ['messages.send', 'write'],
        parse: 'none',
        params: Params,
        response: { ...platformErrors, 201: t.Object({ mediaId: t.String(), expiresAt: Timestamp }), 413: StandardError },
        detail: {
          summary: 'Upload media to send in a template header (multipart `file`) → `mediaId`, valid about 30 days and bound to the phone number; upload again for each send',
          description: `JPEG or PNG (image), MP4 or 3GPP (video), PDF (document); another type is 400. ${mediaLimitsText()}`,
          requestBody: MULTIPART_FILE,
        },
      },
    )
    .get('/:templateId', async ({ actor, params }) => presentTemplate(await getTemplate(stores(), deps, actor, params.id, params.templateId)), {
      params: TemplateParams,
      response: { ...errors, 200: TemplateView },
      detail: { summary: 'One template, its status refreshed from the platform (polling), with `rejected_reason` when REJECTED' },
    })
    .delete(
      '/:templateId',
      async ({ actor, params }) => {
        await deleteTemplate(stores(), deps, actor, params.id, params.templateId);
        return { id: params.templateId, deleted: true as const };
      },
      {
        role: ['connections', 'write'],
        params: TemplateParams,
        response: { ...platformErrors, 200: t.Object({ id: t.String(), deleted: t.Literal(true) }) },
        detail: { summary: 'Delete the template on the platform and here (that name in that language)' },
      },
    );
}

async function readFile(request: Request, limit: number): Promise<UploadedFile> {
  if (!(request.headers.get('content-type') ?? '').toLowerCase().startsWith('multipart/form-data')) throw badRequest(['body: a multipart/form-data upload with a `file` field']);
  const form = await readMultipart(request, limit);
  if (!form) throw badRequest(['body: a multipart/form-data upload with a `file` field']);
  const file = form.get('file');
  if (!(file instanceof Blob)) throw badRequest(['file: required (a multipart field named `file`)']);
  const mimetype = (file.type || '').split(';')[0]!.trim().toLowerCase();
  const fileName = file instanceof File && file.name ? file.name : 'upload';
  return { bytes: new Uint8Array(await file.arrayBuffer()), mimetype, fileName };
}

export function presentTemplate(template: Template) {
  return {
    id: template.id,
    connectionId: template.connectionId,
    externalId: template.externalId,
    name: template.name,
    language: template.language,
    category: template.category,
    status: template.status,
    rejected_reason: template.rejectedReason,
    components: template.components,
    createdAt: iso(template.createdAt),
    updatedAt: iso(template.updatedAt),
  };
}

import { Elysia, t } from 'elysia';
import { createLabel, deleteLabel, DESCRIPTION_MAX_LENGTH, getLabel, listLabels, updateLabel, type Label } from '../../../core/helpdesk/labels/labels-catalogue.ts';
import { LABEL_MAX_LENGTH } from '../../../core/helpdesk/labels/label-sets.ts';
import { pageRequest } from '../../../core/shared/pagination.ts';
import { authentication } from '../../kernel/http.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { authErrors, iso, PageOf, PageQuery, StandardError, Timestamp, Uuid } from '../../kernel/http.ts';
import { labelStores } from './store.ts';

export const LabelView = t.Object({
  id: Uuid,
  name: t.String({ description: `1 to ${LABEL_MAX_LENGTH} characters, no comma; unique in the workspace case-insensitively` }),
  color: t.Nullable(t.String({ description: 'A colour as #rrggbb' })),
  description: t.Nullable(t.String()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

const Fields = {
  color: t.Optional(t.Nullable(t.String({ description: 'A colour as #rrggbb; null clears it' }))),
  description: t.Optional(t.Nullable(t.String({ description: `At most ${DESCRIPTION_MAX_LENGTH} characters; null clears it` }))),
};
const Id = t.Object({ id: t.String() });
const NotFound = { 404: StandardError };
const Deleted = t.Object({ id: t.String(), deleted: t.Literal(true) });

/**
 * The workspace's labels (issue 6; payloads ours). Any member reads them; Managers and above
 * create, rename, recolour and delete them (PRO plan). A rename is carried onto every
 * conversation wearing the label, a delete takes it off every one, in the same transaction.
 */
export function labelRoutes(ctx: PluginContext) {
  return new Elysia({ name: 'plugins.helpdesk.labels', prefix: '/v3/helpdesk/labels', detail: { tags: ['Helpdesk'] } })
    .use(authentication(ctx))
    .guard({ auth: true }, (app) =>
      app
        .get(
          '',
          async ({ actor, query }) => {
            const found = await listLabels(ctx.storage.read(labelStores), actor, pageRequest(query));
            return { ...found, data: found.data.map(presentLabel) };
          },
          { query: PageQuery, response: { ...authErrors, 200: PageOf(LabelView) }, detail: { summary: 'Labels of the workspace, by name; `s` searches the name' } },
        )
        .post(
          '',
          async ({ actor, body, set }) => {
            const label = await ctx.storage.transaction(labelStores, (s) => createLabel(s, ctx, actor, body));
            set.status = 201;
            return presentLabel(label);
          },
          {
            role: ['helpdesk.configure', 'write'],
            body: t.Object({ name: t.String({ description: `1 to ${LABEL_MAX_LENGTH} characters, no comma` }), ...Fields }),
            response: { ...authErrors, 201: LabelView, 409: StandardError },
            detail: { summary: 'Create a label (Manager and above, PRO plan); a name already used (in any case) is 409' },
          },
        )
        .get('/:id', async ({ actor, params }) => presentLabel(await getLabel(ctx.storage.read(labelStores), actor, params.id)), {
          params: Id,
          response: { ...authErrors, ...NotFound, 200: LabelView },
          detail: { summary: 'One label' },
        })
        .patch('/:id', async ({ actor, params, body }) => presentLabel(await ctx.storage.transaction(labelStores, (s) => updateLabel(s, ctx, actor, params.id, body))), {
          role: ['helpdesk.configure', 'write'],
          params: Id,
          body: t.Object({ name: t.Optional(t.String({ description: 'A new name: every conversation wearing the label is renamed too' })), ...Fields }),
          response: { ...authErrors, ...NotFound, 200: LabelView, 409: StandardError },
          detail: { summary: 'Rename, recolour or redescribe a label (Manager and above, PRO plan); fields left out keep their value' },
        })
        .delete(
          '/:id',
          async ({ actor, params }) => {
            await ctx.storage.transaction(labelStores, (s) => deleteLabel(s, actor, params.id));
            return { id: params.id, deleted: true as const };
          },
          {
            role: ['helpdesk.configure', 'write'],
            params: Id,
            response: { ...authErrors, ...NotFound, 200: Deleted },
            detail: { summary: 'Delete a label (Manager and above, PRO plan); it is taken off every conversation' },
          },
        ),
    );
}

export function presentLabel(l: Label) {
  return { id: l.id, name: l.name, color: l.color, description: l.description, createdAt: iso(l.createdAt), updatedAt: iso(l.updatedAt) };
}

import { t } from 'elysia';
import { createLabel, deleteLabel, DESCRIPTION_MAX_LENGTH, getLabel, listLabels, updateLabel, type Label } from '../../../core/helpdesk/labels/labels-catalogue.ts';
import { LABEL_MAX_LENGTH } from '../../../core/helpdesk/labels/label-sets.ts';
import { catalogueRoutes } from '../../kernel/catalogue-routes.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { iso, StandardError, Timestamp, Uuid } from '../../kernel/http.ts';
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
const NotFound = { 404: StandardError };

/**
 * The workspace's labels (issue 6; payloads ours). Any member reads them; Managers and above
 * create, rename, recolour and delete them (PRO plan). A rename is carried onto every
 * conversation wearing the label, a delete takes it off every one, in the same transaction.
 */
export function labelRoutes(ctx: PluginContext) {
  return catalogueRoutes(ctx, {
    name: 'plugins.helpdesk.labels',
    prefix: '/v3/helpdesk/labels',
    tags: ['Helpdesk'],
    stores: labelStores,
    view: LabelView,
    present: presentLabel,
    list: { run: listLabels, summary: 'Labels of the workspace, by name; `s` searches the name' },
    create: {
      role: ['helpdesk.configure', 'write'],
      body: t.Object({ name: t.String({ description: `1 to ${LABEL_MAX_LENGTH} characters, no comma` }), ...Fields }),
      run: (s, actor, body) => createLabel(s, ctx, actor, body),
      errors: { 409: StandardError },
      summary: 'Create a label (Manager and above, PRO plan); a name already used (in any case) is 409',
    },
    get: { run: getLabel, errors: NotFound, summary: 'One label' },
    update: {
      role: ['helpdesk.configure', 'write'],
      body: t.Object({ name: t.Optional(t.String({ description: 'A new name: every conversation wearing the label is renamed too' })), ...Fields }),
      run: (s, actor, id, body) => updateLabel(s, ctx, actor, id, body),
      errors: { ...NotFound, 409: StandardError },
      summary: 'Rename, recolour or redescribe a label (Manager and above, PRO plan); fields left out keep their value',
    },
    remove: {
      role: ['helpdesk.configure', 'write'],
      run: deleteLabel,
      errors: NotFound,
      summary: 'Delete a label (Manager and above, PRO plan); it is taken off every conversation',
    },
  });
}

export function presentLabel(l: Label) {
  return { id: l.id, name: l.name, color: l.color, description: l.description, createdAt: iso(l.createdAt), updatedAt: iso(l.updatedAt) };
}

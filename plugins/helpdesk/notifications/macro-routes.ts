import { Elysia, t } from 'elysia';
import { MACRO_ACTION_TYPES, MAX_MACRO_ACTIONS } from '../../../core/helpdesk/library/macro-actions.ts';
import { createMacro, deleteMacro, getMacro, listMacros, MACRO_NAME_MAX_LENGTH, MACRO_VISIBILITIES, runMacro, updateMacro } from '../../../core/helpdesk/library/macros.ts';
import { authenticatedRoutes, authErrors, catalogueRouteScopes, OneOf, StandardError } from '../../kernel/http.ts';
import { catalogueRoutes } from '../../kernel/catalogue-routes.ts';
import type { PluginContext } from '../../kernel/context.ts';
import type { RouteScope } from '../../kernel/http.ts';
import { messagingDeps, messagingStores } from '../../kernel/storage.ts';
import { ConversationView, HelpdeskMessageView, present, presentMessage } from '../conversations/views.ts';
import { macroRunStores, macroStores } from './library-stores.ts';
import { MacroView, presentMacro } from './views.ts';

export const MACRO_ROUTE_SCOPES: RouteScope[] = [
  ...catalogueRouteScopes('/v3/helpdesk/macros', { read: ['helpdesk:read'], write: ['helpdesk:write'] }),
  { method: 'POST', path: '/v3/helpdesk/conversations/:id/macros/:macroId/run', scopes: ['helpdesk:write'] },
];

/**
 * Checked by the use case (core/helpdesk/library/macro-actions.ts), which names every broken rule as
 * `body.actions[i]…`; the shapes are those of `MacroView.actions`.
 */
const ActionInput = t.Object(
  { type: t.String({ description: `One of ${MACRO_ACTION_TYPES.join(', ')}` }) },
  {
    additionalProperties: true,
    description:
      'assign_agent {userId|null}, assign_team {teamId|null}, add_labels {labels}, remove_labels {labels}, set_priority {priority|null}, ' +
      'change_status {status, snoozedUntil? | snoozeMinutes? (SNOOZED only)}, send_message {content}, add_private_note {content}',
  },
);
const Actions = t.Array(ActionInput, { description: `1 to ${MAX_MACRO_ACTIONS} actions, applied in this order` });
const Name = t.String({ description: `1 to ${MACRO_NAME_MAX_LENGTH} characters` });
const Visibility = OneOf(MACRO_VISIBILITIES, { description: 'personal (default): only you see and run it; workspace: every member (Manager and above)' });

/**
 * Macros (core/helpdesk/library/macros.ts): a member's personal ones and the workspace's; running one on
 * a conversation applies its actions in one transaction, as the caller would by hand.
 */
export function macroRoutes(ctx: PluginContext) {
  const deps = { clock: ctx.clock, ids: ctx.ids };
  const sendDeps = messagingDeps(ctx);

  const library = catalogueRoutes(ctx, {
    name: 'plugins.helpdesk.macros',
    prefix: '/v3/helpdesk/macros',
    tags: ['Helpdesk'],
    stores: macroStores,
    view: MacroView,
    present: presentMacro,
    list: { role: ['helpdesk.work', 'read'], run: listMacros, summary: 'The workspace\'s macros and your personal ones, by name; `s` searches the name' },
    create: {
      // A workspace macro needs helpdesk.configure too: that depends on the body, so core checks it.
      role: ['helpdesk.work', 'write'],
      body: t.Object({ name: Name, visibility: t.Optional(Visibility), actions: Actions }),
      run: (s, actor, body) => createMacro(s, deps, actor, body),
      summary: 'Create a macro (PRO plan): a personal one (any member) or a workspace one (Manager and above)',
    },
    get: { role: ['helpdesk.work', 'read'], run: getMacro, summary: 'One macro (another member\'s personal macro is 404)' },
    // Changing or deleting a macro keeps its role check in core: which capability it needs depends
    // on the macro (personal or workspace), and another member's personal macro is 404 first.
    update: {
      body: t.Object({ name: t.Optional(Name), visibility: t.Optional(Visibility), actions: t.Optional(Actions) }),
      run: (s, actor, id, body) => updateMacro(s, deps, actor, id, body),
      summary: 'Change a macro (PRO plan; yours if personal, Manager and above for workspace macros and to change visibility); actions replace the list',
    },
    remove: { run: deleteMacro, summary: 'Delete a macro (PRO plan; yours if personal, Manager and above for workspace macros)' },
  });

  // Role checked in core, after the conversation's and the macro's visibility (404 first).
  const runs = authenticatedRoutes(ctx, { name: 'plugins.helpdesk.macro-runs', prefix: '/v3/helpdesk/conversations', tags: ['Helpdesk'] })
    .post(
      '/:id/macros/:macroId/run',
      async ({ actor, params, set }) => {
        set.status = 201;
        const result = await ctx.storage.transaction(macroRunStores, (stores, trx) =>
          runMacro(stores, { stores: messagingStores(trx, ctx), deps: sendDeps }, deps, actor, params.id, params.macroId),
        );
        return { conversation: present(result.conversation), messages: result.messages.map(presentMessage) };
      },
      {
        params: t.Object({ id: t.String(), macroId: t.String() }),
        body: t.Optional(t.Object({}, { description: 'No fields; the body may be left out', additionalProperties: true })),
        response: {
          ...authErrors,
          201: t.Object({
            conversation: ConversationView,
            messages: t.Array(HelpdeskMessageView, { description: 'What the run wrote, in order: replies, notes, activity lines of status changes' }),
          }),
          409: StandardError,
          422: StandardError,
        },
        detail: {
          summary:
            'Run a macro on the conversation (PRO plan): its actions in order, as you would by hand, in one transaction; an action that fails undoes the whole run and answers its error, prefixed with actions[i]',
        },
      },
    );

  return new Elysia({ name: 'plugins.helpdesk.macros.all' }).use(library).use(runs);
}

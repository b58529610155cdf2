import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { notificationDraft } from '../../core/helpdesk/notifications/notifications.ts';
import { MACRO_ACTION_TYPES, MAX_MACRO_ACTIONS, parseMacroActions } from '../../core/helpdesk/library/macro-actions.ts';
import { DomainError } from '../../core/shared/errors.ts';

/**
 * Who an event notifies (core/helpdesk/notifications/notifications.ts), against the table's rules; and the
 * macro action parser (core/helpdesk/library/macro-actions.ts): anything it is given is either a list of
 * valid actions or one 400, never a crash.
 */

const user = fc.constantFrom('u1', 'u2', 'u3');
const maybeUser = fc.option(user, { nil: null });

const events = fc.oneof(
  fc.record({ type: fc.constant('helpdesk.mention.created'), mentionedUserId: user, actorUserId: maybeUser, messageId: fc.constant('m1') }),
  fc.record({ type: fc.constant('helpdesk.conversation.assignee_changed'), fromAssigneeUserId: maybeUser, toAssigneeUserId: maybeUser, actorUserId: maybeUser }),
  fc.record({ type: fc.constant('helpdesk.message.created'), message: fc.record({ id: fc.constant('m2'), direction: fc.constantFrom('incoming', 'outgoing', 'activity') }) }),
  fc.record({ type: fc.constantFrom('helpdesk.conversation.status_changed', 'helpdesk.label.created'), actorUserId: maybeUser }),
);

describe('who an event notifies', () => {
  test('never the actor, never for nothing, and exactly as the table says', () => {
    fc.assert(
      fc.property(events, maybeUser, (event, assignee) => {
        const draft = notificationDraft({ accountId: 'w', conversationId: 'c', ...event }, assignee);
        const e = event as Record<string, any>;
        if (draft) expect(draft.userId).not.toBe(e.actorUserId);
        switch (e.type) {
          case 'helpdesk.mention.created':
            expect(draft?.userId ?? null).toBe(e.mentionedUserId === e.actorUserId ? null : e.mentionedUserId);
            if (draft) expect(draft).toMatchObject({ type: 'mention', messageId: 'm1', secondaryActorId: e.actorUserId, secondaryActorType: e.actorUserId ? 'user' : null });
            break;
          case 'helpdesk.conversation.assignee_changed': {
            const told = e.toAssigneeUserId !== null && e.toAssigneeUserId !== e.fromAssigneeUserId && e.toAssigneeUserId !== e.actorUserId;
            expect(draft?.userId ?? null).toBe(told ? e.toAssigneeUserId : null);
            if (draft) expect(draft.type).toBe('assigned');
            break;
          }
          case 'helpdesk.message.created':
            expect(draft?.userId ?? null).toBe(e.message.direction === 'incoming' ? assignee : null);
            if (draft) expect(draft).toMatchObject({ type: 'new_message_in_assigned', messageId: 'm2' });
            break;
          default:
            expect(draft).toBeNull();
        }
      }),
    );
  });
});

const validAction = fc.oneof(
  fc.record({ type: fc.constant('assign_agent'), userId: fc.option(fc.uuid(), { nil: null }) }),
  fc.record({ type: fc.constant('assign_team'), teamId: fc.option(fc.uuid(), { nil: null }) }),
  fc.record({ type: fc.constantFrom('add_labels', 'remove_labels'), labels: fc.array(fc.constantFrom('vip', 'VIP ', 'refund', 'late'), { minLength: 1, maxLength: 5 }) }),
  fc.record({ type: fc.constant('set_priority'), priority: fc.constantFrom('LOW', 'MEDIUM', 'HIGH', 'URGENT', null) }),
  fc.record({ type: fc.constant('change_status'), status: fc.constantFrom('OPEN', 'PENDING', 'RESOLVED') }),
  fc.record({ type: fc.constant('change_status'), status: fc.constant('SNOOZED'), snoozeMinutes: fc.integer({ min: 1, max: 10_000 }) }),
  fc.record({ type: fc.constantFrom('send_message', 'add_private_note'), content: fc.string({ minLength: 1, maxLength: 50 }).filter((s) => s.trim() !== '') }),
);

describe('macro actions', () => {
  test('valid actions are kept in order, normalised, and parse again to themselves', () => {
    fc.assert(
      fc.property(fc.array(validAction, { minLength: 1, maxLength: MAX_MACRO_ACTIONS }), (actions) => {
        const parsed = parseMacroActions(actions);
        expect(parsed.map((a) => a.type)).toEqual(actions.map((a) => a.type));
        expect(parseMacroActions(JSON.parse(JSON.stringify(parsed)))).toEqual(parsed);
      }),
    );
  });

  test('anything else is one 400 naming each bad action by its position, never a crash', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(validAction, fc.anything(), fc.record({ type: fc.constantFrom(...MACRO_ACTION_TYPES) }, { requiredKeys: [] })), { maxLength: MAX_MACRO_ACTIONS + 3 }), (actions) => {
        try {
          const parsed = parseMacroActions(actions);
          expect(parsed).toHaveLength(actions.length);
          for (const a of parsed) expect(MACRO_ACTION_TYPES).toContain(a.type);
        } catch (error) {
          expect(error).toBeInstanceOf(DomainError);
          expect((error as DomainError).kind).toBe('invalid_input');
          for (const m of (error as DomainError).messages ?? []) expect(m).toMatch(/^body\.actions/);
        }
      }),
    );
  });
});

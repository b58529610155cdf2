import type { Role } from '../../identity/roles.ts';
import type { Clock, IdGen } from '../../shared/ports.ts';
import type { ConversationStore, HelpdeskMessageStore } from '../conversations/conversations.ts';
import { mentionCreated, type HelpdeskEventLog } from '../events.ts';
import { seesEveryInbox } from '../inboxes/inboxes.ts';

/**
 * @mentions of workspace members in private notes (issue 7 item 6; spec 6.5 `helpdesk.mention.created`).
 *
 * Syntax (ours):
 * - canonical: `@[Ana Silva](user:<userId>)`. The id decides who is mentioned; the text between
 *   the brackets is only what a client shows (it may be stale after a rename). Clients should
 *   write this form: it survives a change of email and renders without a lookup.
 * - plain `@ana@example.com`: the `@` followed by a member's email (compared case-insensitively),
 *   resolved when the note is read for mentions. The `@` must not follow a letter, digit or one
 *   of `.+-_` (so the `@` inside an email is never a mention of its domain).
 * Notes are stored as written; nothing is rewritten.
 *
 * Rules: only members of the workspace are ever mentioned (an unknown id or email is plain text);
 * each member at most once per note, in order of first appearance. A mentioned member who cannot
 * see the conversation's inbox (an Agent who is not a member of it) is skipped: no mention, no
 * event, no notification, since they could not open what they are pointed at.
 */

export interface MentionableMember {
  userId: string;
  email: string;
}

const CANONICAL = String.raw`@\[([^\]\n]*)\]\(user:([^)\s]*)\)`;
const EMAIL = String.raw`(?<![A-Za-z0-9._+-])@([A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,})`;

/** The ids of the members mentioned in `content`, each once, in order of first appearance. */
export function mentionedUserIds(content: string, members: readonly MentionableMember[]): string[] {
  const byId = new Set(members.map((m) => m.userId));
  const byEmail = new Map(members.map((m) => [m.email.toLowerCase(), m.userId]));
  const found: string[] = [];
  // One pass with both forms: matches never overlap, so an email written inside a canonical
  // mention's brackets is not read a second time.
  for (const match of content.matchAll(new RegExp(`${CANONICAL}|${EMAIL}`, 'g'))) {
    const userId = match[2] !== undefined ? (byId.has(match[2]) ? match[2] : undefined) : byEmail.get(match[3]!.toLowerCase());
    if (userId !== undefined && !found.includes(userId)) found.push(userId);
  }
  return found;
}

/** The canonical markup of a mention; brackets and line breaks in the shown name are dropped. */
export function mentionMarkup(member: { userId: string; name: string }): string {
  return `@[${member.name.replace(/[[\]\r\n]/g, '').trim()}](user:${member.userId})`;
}

/** A member mentioned in a note (one per note and member). */
export interface Mention {
  id: string;
  workspaceId: string;
  conversationId: string;
  messageId: string;
  mentionedUserId: string;
  /** The author of the note. */
  actorUserId: string | null;
  createdAt: Date;
}

export interface MentionStores {
  conversations: Pick<ConversationStore, 'get'>;
  messages: Pick<HelpdeskMessageStore, 'get'>;
  /** Members of the workspace, with their roles and whether they belong to the inbox. */
  mentionable(workspaceId: string, inboxId: string): Promise<Array<MentionableMember & { roles: Role[]; inboxMember: boolean }>>;
  mentions: {
    /** False when the note already mentions this member (a rerun, or an edit keeping the mention). */
    insertIfAbsent(mention: Mention): Promise<boolean>;
  };
  events: HelpdeskEventLog;
}

export interface MentionDeps {
  clock: Clock;
  ids: IdGen;
}

/**
 * Reads a private note for mentions and records each new one with `helpdesk.mention.created`
 * (run after the note was written or edited). Idempotent: a member is mentioned once per note,
 * so a rerun, or an edit that keeps a mention, records nothing more; an edit adding one records it.
 */
export async function recordMentions(stores: MentionStores, deps: MentionDeps, ref: { workspaceId: string; conversationId: string; messageId: string }): Promise<Mention[]> {
  const conversation = await stores.conversations.get(ref.workspaceId, ref.conversationId);
  const note = conversation && (await stores.messages.get(conversation.id, ref.messageId));
  if (!conversation || !note || !note.private || note.direction !== 'outgoing') return [];
  const members = await stores.mentionable(conversation.workspaceId, conversation.inboxId);
  const seeing = members.filter((m) => m.inboxMember || seesEveryInbox({ userId: m.userId, workspaceId: conversation.workspaceId, roles: m.roles }));
  const recorded: Mention[] = [];
  for (const userId of mentionedUserIds(note.content, seeing)) {
    const mention: Mention = {
      id: deps.ids.next(),
      workspaceId: conversation.workspaceId,
      conversationId: conversation.id,
      messageId: note.id,
      mentionedUserId: userId,
      actorUserId: note.senderUserId,
      createdAt: deps.clock.now(),
    };
    if (!(await stores.mentions.insertIfAbsent(mention))) continue;
    await stores.events.record(mentionCreated(conversation, mention));
    recorded.push(mention);
  }
  return recorded;
}

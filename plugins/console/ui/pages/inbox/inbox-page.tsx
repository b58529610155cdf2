/**
 * The agent inbox (issue 23): the conversation list with its views, filters and search on the
 * left, the open conversation with its composer and the contact's panel beside it. The address
 * is `#/inbox` or `#/inbox/<conversationId>`.
 */
import './inbox.css';
import type { Route } from '../../router.ts';
import { ConversationPane } from './conversation-pane.tsx';

export function InboxPage({ route }: { route: Route }) {
  const conversationId = route.parts[1];
  return (
    <div class="inbox">
      <h1 class="sr-only">Inbox</h1>
      <section aria-label="Conversations">…</section>
      {conversationId ? <ConversationPane key={conversationId} conversationId={conversationId} /> : <p class="muted">Pick a conversation.</p>}
    </div>
  );
}

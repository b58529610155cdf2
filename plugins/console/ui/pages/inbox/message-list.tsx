/**
 * The conversation's messages, oldest first: the contact's on the left, replies on the right
 * with their delivery status, private notes set apart (yellow, "Private note", mentions as
 * chips), activity lines centred; files as inline images or download links.
 */
import { Button, StatusBadge, When } from '../../components.tsx';
import { noteParts } from './mention-text.ts';
import { personName, type Attachment, type HelpdeskMessage, type Person } from './conversation-model.ts';
import { useStickToNewest } from '../../stick-to-newest.ts';

export function MessageList({
  messages,
  people,
  contactName,
  olderPending,
  onOlder,
}: {
  messages: HelpdeskMessage[];
  people: Person[] | undefined;
  contactName: string;
  /** Set when older messages may exist: shows the button that reads them. */
  onOlder?: () => void;
  olderPending: boolean;
}) {
  const scroller = useStickToNewest<HTMLOListElement>(messages[messages.length - 1]?.id);

  return (
    <div class="conversation-messages">
      {onOlder && (
        <div class="older">
          <Button variant="secondary" pending={olderPending} onClick={onOlder}>
            Show older messages
          </Button>
        </div>
      )}
      <ol class="thread" ref={scroller} aria-label="Messages, oldest first" id="conversation-messages" tabIndex={0}>
        {messages.map((m) => (
          <MessageItem message={m} people={people} contactName={contactName} />
        ))}
      </ol>
    </div>
  );
}

function MessageItem({ message: m, people, contactName }: { message: HelpdeskMessage; people: Person[] | undefined; contactName: string }) {
  if (m.direction === 'activity') {
    return (
      <li class="activity" data-message-id={m.id}>
        {m.content} · <When at={m.createdAt} />
      </li>
    );
  }
  const author = m.direction === 'incoming' ? contactName : m.senderUserId ? personName(people, m.senderUserId) : m.senderAgentBotId ? 'Agent bot' : 'Helpdesk';
  const kind = m.direction === 'incoming' ? 'in' : m.private ? 'note' : 'out';
  const what = kind === 'in' ? 'Received' : kind === 'note' ? 'Private note' : 'Reply';
  return (
    <li class={`message ${kind}`} data-message-id={m.id} aria-label={`${what} from ${author}: ${m.content}`}>
      <div class="message-head">
        <strong>{author}</strong>
        {kind === 'note' && <span class="note-tag">Private note</span>}
      </div>
      {m.content && <div class="message-text">{m.private ? <NoteText content={m.content} /> : m.content}</div>}
      {m.attachments.length > 0 && (
        <ul class="attachments" aria-label="Files">
          {m.attachments.map((a) => (
            <AttachmentItem attachment={a} />
          ))}
        </ul>
      )}
      <div class="meta">
        <When at={m.createdAt} />
        {kind === 'out' && m.status && <StatusBadge status={m.status} />}
      </div>
      {m.status === 'FAILED' && <p class="error-text">{m.externalError ?? 'Not delivered'}</p>}
    </li>
  );
}

function NoteText({ content }: { content: string }) {
  return (
    <>
      {noteParts(content).map((part) =>
        'mention' in part ? (
          <span class="mention" data-user-id={part.userId}>
            @{part.mention}
          </span>
        ) : (
          part.text
        ),
      )}
    </>
  );
}

function AttachmentItem({ attachment: a }: { attachment: Attachment }) {
  const size = a.size === null ? '' : ` (${readableSize(a.size)})`;
  if (a.mimeType.startsWith('image/')) {
    return (
      <li>
        <a href={a.downloadUrl} target="_blank" rel="noopener">
          <img src={a.downloadUrl} alt={a.fileName} loading="lazy" />
        </a>
      </li>
    );
  }
  return (
    <li>
      <a class="file-link" href={a.downloadUrl} download={a.fileName}>
        {a.fileName}
        {size}
      </a>
    </li>
  );
}

export function readableSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/**
 * One contact (`#/contacts/<id>`): details and custom attributes (editable by anyone who works
 * the helpdesk), notes, the conversations the member may see (each opening in the inbox), and
 * for Managers and above: delete (with what goes with it) and merge (contacts-merge.tsx).
 */
import { useState } from 'preact/hooks';
import { ApiError, del, get, itemsOf } from '../api.ts';
import { Button, Card, Dialog, EmptyState, ErrorNote, Loading, PageHeader, StatusBadge, When } from '../components.tsx';
import { useAction, useLoad, type Loaded } from '../data.ts';
import { href, navigate } from '../router.ts';
import { useSession } from '../session.ts';
import { ContactDetails, ContactNotes } from './inbox/contact-panel.tsx';
import { contactName, type Person } from './inbox/conversation-model.ts';
import type { ConversationPage } from './inbox/inbox-model.ts';
import { MergeDialog } from './contacts-merge.tsx';
import { contactPath, conversationCount, conversationHref, loadContactConversations, type ListedContact } from './contacts-model.ts';

/** The conversations listed on the page; the count says how many there are in all. */
const CONVERSATIONS_SHOWN = 20;

export function ContactDetailPage({ id }: { id: string }) {
  const session = useSession();
  const mayWrite = session.may('helpdesk.work', 'write');
  const configures = session.may('helpdesk.configure', 'write');
  const contact = useLoad(() => get<ListedContact>(contactPath(id)), [id]);
  const conversations = useLoad(() => loadContactConversations(id, CONVERSATIONS_SHOWN), [id]);
  // Names the notes' authors; a member who may not list members sees "A member".
  const people = useLoad(() => get('/v3/members', { per_page: 100 }).then(itemsOf<Person>, () => []), []);
  const [dialog, setDialog] = useState<'delete' | 'merge' | undefined>();

  const back = (
    <a href={href('contacts')} class="back-link">
      ← All contacts
    </a>
  );
  if (contact.error instanceof ApiError && contact.error.status === 404) {
    return (
      <>
        <PageHeader title="Contact not found" description={back} />
        <Card>
          <EmptyState title="This contact does not exist">It may have been deleted, or merged into another contact.</EmptyState>
        </Card>
      </>
    );
  }
  const c = contact.data;
  return (
    <>
      <PageHeader
        title={c ? contactName(c) : 'Contact'}
        description={back}
        actions={
          configures &&
          c && (
            <>
              <Button variant="secondary" onClick={() => setDialog('merge')}>
                Merge…
              </Button>
              <Button variant="danger" onClick={() => setDialog('delete')}>
                Delete…
              </Button>
            </>
          )
        }
      />
      <ErrorNote error={contact.error} prefix="The contact could not be read." />
      <div class="split wide-right contact-page">
        <div>
          <Card title="Details">{c ? <ContactDetails contact={c} mayWrite={mayWrite} onSaved={contact.reload} /> : contact.error ? null : <Loading rows={4} label="Loading the contact" />}</Card>
          <Card>
            <ContactNotes base={contactPath(id)} people={people.data} mayWrite={mayWrite} />
          </Card>
        </div>
        <Card title={conversations.data?.total ? `Conversations (${conversationCount(conversations.data)})` : 'Conversations'}>
          <ConversationList conversations={conversations} />
        </Card>
      </div>
      {c && configures && (
        <>
          <DeleteDialog open={dialog === 'delete'} contact={c} conversations={conversations.data} onClose={() => setDialog(undefined)} />
          <MergeDialog
            open={dialog === 'merge'}
            contact={c}
            onClose={() => setDialog(undefined)}
            onMerged={async (kept) => {
              setDialog(undefined);
              if (kept.id !== c.id) navigate('contacts', kept.id);
              else await Promise.all([contact.reload(), conversations.reload()]);
            }}
          />
        </>
      )}
    </>
  );
}

function ConversationList({ conversations }: { conversations: Loaded<ConversationPage> }) {
  if (conversations.error) return <ErrorNote error={conversations.error} prefix="The conversations could not be read." />;
  if (!conversations.data) return <Loading rows={3} label="Loading the conversations" />;
  const { data, total } = conversations.data;
  if (data.length === 0) return <EmptyState title="No conversations">None in the inboxes you work in. A conversation starts when the contact writes, or when you write to them from the inbox.</EmptyState>;
  return (
    <>
      <ul class="link-list contact-conversations">
        {data.map((v) => (
          <li>
            <a href={conversationHref(v.id)}>Conversation #{v.displayId}</a> <StatusBadge status={v.status} /> <When at={v.lastActivityAt} />
            {v.lastMessage && <p class="muted preview">{v.lastMessage.private ? `Note: ${v.lastMessage.content}` : v.lastMessage.content}</p>}
          </li>
        ))}
      </ul>
      {total > data.length && <p class="hint">The {data.length} with the latest activity are shown.</p>}
    </>
  );
}

function DeleteDialog({ open, contact, conversations, onClose }: { open: boolean; contact: ListedContact; conversations: ConversationPage | undefined; onClose: () => void }) {
  const deleting = useAction();
  const name = contactName(contact);
  const remove = async () => {
    if (await deleting.run(() => del(contactPath(contact.id)))) {
      onClose();
      navigate('contacts');
    }
  };
  return (
    <Dialog title={`Delete ${name}?`} open={open} onClose={onClose}>
      <p>This removes, for everyone in the workspace and for good:</p>
      <ul>
        <li>the contact {name}, with its details and custom attributes;</li>
        <li>{conversations ? `its ${conversationCount(conversations)}` : 'its conversations'}, with all their messages and files;</li>
        <li>its notes.</li>
      </ul>
      <p class="muted">The WhatsApp chats stay on the connections' phones. To keep the history under another contact, merge instead.</p>
      <ErrorNote error={deleting.error} prefix="Not deleted." />
      <div class="form-actions">
        <Button variant="danger" pending={deleting.pending} onClick={remove}>
          Delete contact and conversations
        </Button>
        <Button variant="secondary" onClick={onClose}>
          Cancel
        </Button>
      </div>
    </Dialog>
  );
}

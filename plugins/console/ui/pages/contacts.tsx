/**
 * Contacts (`#/contacts?s=…`, `#/contacts/<id>`, `#/contacts/import`): the helpdesk's contacts,
 * searched by name, phone or e-mail, a page at a time with "Load more". One contact's page
 * (attributes, notes, conversations, delete, merge) is in contacts-detail.tsx; the CSV import in
 * contacts-import.tsx (Managers and above).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { Button, Card, EmptyState, ErrorNote, Loading, PageHeader, Table } from '../components.tsx';
import { useAction } from '../data.ts';
import { href, type Route } from '../router.ts';
import { useSession } from '../session.ts';
import { ContactDetailPage } from './contacts-detail.tsx';
import { ContactImportPage } from './contacts-import.tsx';
import { appendPage, loadContactPage, type ContactPage, type ListedContact } from './contacts-model.ts';
import './contacts.css';

export function ContactsPage({ route }: { route: Route }) {
  const id = route.parts[1];
  if (id === 'import') return <ContactImportPage />;
  return id ? <ContactDetailPage id={id} /> : <ContactList search={route.query.get('s') ?? ''} />;
}

function ContactList({ search }: { search: string }) {
  const session = useSession();
  const configures = session.may('helpdesk.configure', 'write');
  const [text, setText] = useState(search);
  const [list, setList] = useState<{ search: string; contacts: ListedContact[]; last: ContactPage } | undefined>();
  const loading = useAction();
  // A page asked for under an earlier search is dropped when it comes back.
  const shown = useRef(search);
  shown.current = search;

  // The address follows the typing after a short pause, so a search survives opening a contact and coming back.
  useEffect(() => {
    if (text === search) return;
    const timer = setTimeout(() => location.replace(`${href('contacts')}${text.trim() ? `?s=${encodeURIComponent(text.trim())}` : ''}`), 300);
    return () => clearTimeout(timer);
  }, [text, search]);

  useEffect(() => {
    void loading.run(async () => {
      const first = await loadContactPage(search, 1);
      if (search === shown.current) setList({ search, contacts: first.data, last: first });
    });
  }, [search]);

  const more = async () => {
    if (!list) return;
    const next = await loading.run(() => loadContactPage(list.search, list.last.currentPage + 1));
    if (next && list.search === shown.current) setList({ ...list, contacts: appendPage(list.contacts, next.data), last: next });
  };
  const hasMore = list !== undefined && list.last.currentPage < list.last.totalPages;

  return (
    <>
      <PageHeader
        title="Contacts"
        description="The people your team talks to in the inbox: their details, notes and conversations."
        actions={configures && <a class="btn secondary" href={href('contacts', 'import')}>Import CSV</a>}
      />
      <Card>
        <form class="contacts-search" role="search" onSubmit={(e) => e.preventDefault()}>
          <label for="contacts-search">Search contacts</label>
          <input id="contacts-search" type="search" placeholder="Name, phone or e-mail" value={text} maxLength={200} onInput={(e) => setText(e.currentTarget.value)} />
        </form>
        <ErrorNote error={loading.error} prefix="The contacts could not be read." />
        {!list ? (
          loading.error ? null : <Loading rows={5} label="Loading contacts" />
        ) : list.contacts.length === 0 ? (
          list.search.trim() ? (
            <EmptyState title={`No contact matches “${list.search.trim()}”`}>Search by part of a name or e-mail, or by the digits of a phone number.</EmptyState>
          ) : (
            <EmptyState title="No contacts yet">
              A contact is made when someone writes to one of your inboxes{configures ? ', or import a CSV file of your customers' : ''}.
            </EmptyState>
          )
        ) : (
          <>
            <p class="muted" aria-live="polite">
              Showing {list.contacts.length.toLocaleString()} of {list.last.total.toLocaleString()} {list.last.total === 1 ? 'contact' : 'contacts'}
            </p>
            <Table caption="Contacts" head={['Name', 'Phone', 'Email']}>
              {list.contacts.map((c) => (
                <tr>
                  <td>
                    <a href={href('contacts', c.id)}>{c.name || <span class="muted">No name</span>}</a>
                  </td>
                  <td class="nowrap">{c.phone ?? <span class="muted">—</span>}</td>
                  <td class="cell-url">{c.email ?? <span class="muted">—</span>}</td>
                </tr>
              ))}
            </Table>
            {hasMore && (
              <div class="load-more">
                <Button variant="secondary" pending={loading.pending} onClick={more}>
                  Load more
                </Button>
              </div>
            )}
          </>
        )}
      </Card>
    </>
  );
}

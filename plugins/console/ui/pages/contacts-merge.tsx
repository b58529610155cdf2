/**
 * Merging two contacts (Managers and above): find the other one by search, choose which of the
 * two stays, read what moves, then `POST /v3/helpdesk/contacts/{kept}/merge`.
 */
import { useEffect, useState } from 'preact/hooks';
import { post } from '../api.ts';
import { Button, Dialog, ErrorNote } from '../components.tsx';
import { useAction, useLoad } from '../data.ts';
import { contactName } from './inbox/conversation-model.ts';
import { contactPath, conversationCount, loadContactConversations, loadContactPage, type ListedContact } from './contacts-model.ts';

const FIELDS = [
  { key: 'name', label: 'name' },
  { key: 'phone', label: 'phone' },
  { key: 'email', label: 'email' },
] as const;

export function MergeDialog({ open, contact, onClose, onMerged }: { open: boolean; contact: ListedContact; onClose: () => void; onMerged: (kept: ListedContact) => void }) {
  return (
    <Dialog title={`Merge ${contactName(contact)} with another contact`} open={open} onClose={onClose}>
      <MergeForm contact={contact} onClose={onClose} onMerged={onMerged} />
    </Dialog>
  );
}

function MergeForm({ contact, onClose, onMerged }: { contact: ListedContact; onClose: () => void; onMerged: (kept: ListedContact) => void }) {
  const [text, setText] = useState('');
  const [search, setSearch] = useState('');
  const [other, setOther] = useState<ListedContact | undefined>();
  const [keepThis, setKeepThis] = useState(true);
  const merging = useAction();
  useEffect(() => {
    const timer = setTimeout(() => setSearch(text.trim()), 300);
    return () => clearTimeout(timer);
  }, [text]);
  const found = useLoad(async () => (search ? (await loadContactPage(search, 1)).data.filter((c) => c.id !== contact.id) : []), [search, contact.id]);

  const kept = keepThis ? contact : other;
  const gone = keepThis ? other : contact;
  const merge = async () => {
    if (!kept || !gone) return;
    const result = await merging.run(() => post<ListedContact>(`${contactPath(kept.id)}/merge`, { mergeContactId: gone.id }));
    if (result) onMerged(result);
  };

  return (
    <div class="merge-form">
      <div class="field">
        <label for="merge-search">Find the other contact</label>
        <input id="merge-search" type="search" placeholder="Name, phone or e-mail" value={text} maxLength={200} onInput={(e) => setText(e.currentTarget.value)} />
      </div>
      <ErrorNote error={found.error} />
      {search && found.data && (
        <fieldset class="merge-choices">
          <legend>Other contact</legend>
          {found.data.length === 0 && <p class="muted">No other contact matches “{search}”.</p>}
          {found.data.map((c) => (
            <label class="merge-choice">
              <input type="radio" name="merge-other" checked={other?.id === c.id} onChange={() => setOther(c)} />
              <span>
                <strong>{contactName(c)}</strong> <span class="muted">{[c.phone, c.email].filter(Boolean).join(' · ')}</span>
              </span>
            </label>
          ))}
        </fieldset>
      )}
      {other && (
        <>
          <fieldset class="merge-choices">
            <legend>Which contact stays?</legend>
            <label class="merge-choice">
              <input type="radio" name="merge-kept" checked={keepThis} onChange={() => setKeepThis(true)} />
              <span>{contactName(contact)} (this one)</span>
            </label>
            <label class="merge-choice">
              <input type="radio" name="merge-kept" checked={!keepThis} onChange={() => setKeepThis(false)} />
              <span>{contactName(other)}</span>
            </label>
          </fieldset>
          <MergeSummary kept={kept!} gone={gone!} />
        </>
      )}
      <ErrorNote error={merging.error} prefix="Not merged." />
      <div class="form-actions">
        <Button pending={merging.pending} disabled={!other} onClick={merge}>
          {kept && gone ? `Merge ${contactName(gone)} into ${contactName(kept)}` : 'Merge'}
        </Button>
        <Button variant="secondary" onClick={onClose}>
          Cancel
        </Button>
      </div>
    </div>
  );
}

/** What the merge does, in the two contacts' own words: who stays, what moves, which empty fields fill. */
function MergeSummary({ kept, gone }: { kept: ListedContact; gone: ListedContact }) {
  const moving = useLoad(() => loadContactConversations(gone.id, 1), [gone.id]);
  const filled = FIELDS.filter((f) => !kept[f.key] && gone[f.key]);
  const keptName = contactName(kept);
  const goneName = contactName(gone);
  return (
    <div class="merge-summary" aria-live="polite">
      <p>
        <strong>{keptName}</strong> stays; <strong>{goneName}</strong> is deleted after its records move:
      </p>
      <ul>
        <li>{moving.data ? `its ${conversationCount(moving.data)}` : 'its conversations'}, its notes and its identities in API inboxes move to {keptName};</li>
        {filled.map((f) => (
          <li>
            its {f.label} {gone[f.key]} becomes {keptName}'s {f.label};
          </li>
        ))}
        <li>custom attributes are joined; where both have one, {keptName}'s value is kept.</li>
      </ul>
    </div>
  );
}

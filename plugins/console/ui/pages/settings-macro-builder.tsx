/**
 * Building a macro: its name, who sees it, and its actions in order (1 to 20), each a type and
 * the few fields that type takes, in the shapes of `POST /v3/helpdesk/macros`. The service checks
 * them again (a member or team that is gone, a bad label) and its message is shown as is.
 */
import { useState } from 'preact/hooks';
import { MACRO_STATUSES } from '../../../../core/helpdesk/library/macro-actions.ts';
import { PRIORITIES } from '../../../../core/helpdesk/conversations/conversation.ts';
import { patch, post } from '../api.ts';
import { Button, ErrorNote, Notice, SelectField, TextArea, TextField } from '../components.tsx';
import { useAction } from '../data.ts';
import { useSession } from '../session.ts';
import { itemPath, type Label, type Macro, type MacroAction, type Person, type Priority, type Team } from './settings-model.ts';

type ActionType = MacroAction['type'];

const TYPES: { value: ActionType; label: string }[] = [
  { value: 'assign_agent', label: 'Assign to a member' },
  { value: 'assign_team', label: 'Give to a team' },
  { value: 'add_labels', label: 'Add labels' },
  { value: 'remove_labels', label: 'Remove labels' },
  { value: 'set_priority', label: 'Set priority' },
  { value: 'change_status', label: 'Change status' },
  { value: 'send_message', label: 'Send a reply' },
  { value: 'add_private_note', label: 'Add a private note' },
];

/** One action as typed: every field a text, turned into the API's shape on saving. */
interface Draft {
  type: ActionType;
  /** A member id, a team id, a priority or a status ('' is "nobody" / "none"). */
  choice: string;
  /** Labels (comma-separated), a reply's or note's text. */
  text: string;
  snoozeMinutes: string;
}

const blank = (type: ActionType = 'add_labels'): Draft => ({ type, choice: type === 'change_status' ? 'RESOLVED' : '', text: '', snoozeMinutes: '60' });

/** A stored action back into the builder's fields. */
function toDraft(a: MacroAction): Draft {
  const d = blank(a.type);
  switch (a.type) {
    case 'assign_agent':
      return { ...d, choice: a.userId ?? '' };
    case 'assign_team':
      return { ...d, choice: a.teamId ?? '' };
    case 'add_labels':
    case 'remove_labels':
      return { ...d, text: a.labels.join(', ') };
    case 'set_priority':
      return { ...d, choice: a.priority ?? '' };
    case 'change_status':
      return { ...d, choice: a.status, snoozeMinutes: a.snoozeMinutes ? String(a.snoozeMinutes) : d.snoozeMinutes };
    case 'send_message':
    case 'add_private_note':
      return { ...d, text: a.content };
  }
}

function toAction(d: Draft): MacroAction {
  switch (d.type) {
    case 'assign_agent':
      return { type: d.type, userId: d.choice || null };
    case 'assign_team':
      return { type: d.type, teamId: d.choice || null };
    case 'add_labels':
    case 'remove_labels':
      return { type: d.type, labels: d.text.split(',').map((l) => l.trim()).filter(Boolean) };
    case 'set_priority':
      return { type: d.type, priority: (d.choice || null) as Priority | null };
    case 'change_status':
      return d.choice === 'SNOOZED'
        ? { type: d.type, status: 'SNOOZED', snoozeMinutes: Number(d.snoozeMinutes) }
        : { type: d.type, status: d.choice as (typeof MACRO_STATUSES)[number] };
    case 'send_message':
    case 'add_private_note':
      return { type: d.type, content: d.text };
  }
}

/** A new macro, or with `macro` that macro's changes (`PATCH`, its actions replaced as a whole). */
export function MacroBuilder({ macro, people, teams, labels, onSaved }: { macro?: Macro; people: Person[]; teams: Team[]; labels: Label[]; onSaved: () => Promise<void> }) {
  const workspaceMacros = useSession().may('helpdesk.configure', 'write');
  const [name, setName] = useState(macro?.name ?? '');
  const [visibility, setVisibility] = useState<Macro['visibility']>(macro?.visibility ?? (workspaceMacros ? 'workspace' : 'personal'));
  const [drafts, setDrafts] = useState<Draft[]>(macro ? macro.actions.map(toDraft) : [blank()]);
  const [created, setCreated] = useState<string>();
  const create = useAction();

  const change = (i: number, next: Partial<Draft>) => setDrafts((all) => all.map((d, j) => (j === i ? { ...d, ...next } : d)));
  const submit = async (e: Event) => {
    e.preventDefault();
    setCreated(undefined);
    const body = { name, visibility, actions: drafts.map(toAction) };
    const saved = await create.run(() => (macro ? patch<Macro>(itemPath('macros', macro.id), body) : post<Macro>('/v3/helpdesk/macros', body)));
    if (saved) {
      if (!macro) {
        setCreated(saved.name);
        setName('');
        setDrafts([blank()]);
      }
      await onSaved();
    }
  };

  return (
    <form class="stack" onSubmit={submit} aria-label={macro ? 'Edit macro' : 'New macro'}>
      <div class="settings-fields">
        <TextField label="Macro name" required maxLength={100} value={name} onValue={setName} />
        <SelectField
          label="Who sees it"
          value={visibility}
          onValue={setVisibility}
          options={[
            ...(workspaceMacros ? [{ value: 'workspace' as const, label: 'Everyone in the workspace' }] : []),
            { value: 'personal' as const, label: 'Only me' },
          ]}
        />
      </div>
      <ol class="settings-macro-builder">
        {drafts.map((d, i) => (
          <li>
            <fieldset>
              <legend>Action {i + 1}</legend>
              <div class="settings-fields">
                <SelectField label={'What'} value={d.type} options={TYPES} onValue={(type) => change(i, blank(type))} />
                <ActionFields draft={d} people={people} teams={teams} labels={labels} onChange={(next) => change(i, next)} />
              </div>
              {drafts.length > 1 && (
                <Button variant="link" onClick={() => setDrafts((all) => all.filter((_, j) => j !== i))} aria-label={`Remove action ${i + 1}`}>
                  Remove
                </Button>
              )}
            </fieldset>
          </li>
        ))}
      </ol>
      <div class="form-actions">
        <Button variant="secondary" disabled={drafts.length >= 20} onClick={() => setDrafts((all) => [...all, blank()])}>
          Add an action
        </Button>
        <Button type="submit" pending={create.pending}>
          {macro ? 'Save macro' : 'Create macro'}
        </Button>
      </div>
      <ErrorNote error={create.error} prefix={macro ? 'Nothing was changed.' : 'No macro was created.'} />
      {created && <Notice>Macro "{created}" created.</Notice>}
    </form>
  );
}

function ActionFields({ draft, people, teams, labels, onChange }: { draft: Draft; people: Person[]; teams: Team[]; labels: Label[]; onChange: (next: Partial<Draft>) => void }) {
  switch (draft.type) {
    case 'assign_agent':
      return <SelectField label={'Member'} value={draft.choice} onValue={(choice) => onChange({ choice })} options={[{ value: '', label: 'Nobody (unassign)' }, ...people.map((p) => ({ value: p.userId, label: p.name || p.email }))]} />;
    case 'assign_team':
      return <SelectField label={'Team'} value={draft.choice} onValue={(choice) => onChange({ choice })} options={[{ value: '', label: 'No team' }, ...teams.map((t) => ({ value: t.id, label: t.name }))]} />;
    case 'add_labels':
    case 'remove_labels':
      return (
        <TextField
          label={'Labels'}
          required
          value={draft.text}
          onValue={(text) => onChange({ text })}
          hint={labels.length > 0 ? `Separated by commas. The workspace has: ${labels.map((l) => l.name).join(', ')}` : 'Separated by commas; a new name becomes a label.'}
        />
      );
    case 'set_priority':
      return <SelectField label={'Priority'} value={draft.choice} onValue={(choice) => onChange({ choice })} options={[{ value: '', label: 'None (clear)' }, ...PRIORITIES.map((p) => ({ value: p, label: p }))]} />;
    case 'change_status':
      return (
        <>
          <SelectField label={'Status'} value={draft.choice} onValue={(choice) => onChange({ choice })} options={MACRO_STATUSES.map((s) => ({ value: s, label: s }))} />
          {draft.choice === 'SNOOZED' && <TextField label={'Snooze for (minutes)'} type="number" min={1} required value={draft.snoozeMinutes} onValue={(snoozeMinutes) => onChange({ snoozeMinutes })} />}
        </>
      );
    case 'send_message':
    case 'add_private_note':
      return <TextArea label={draft.type === 'send_message' ? 'Reply text' : 'Note text'} required rows={2} value={draft.text} onValue={(text) => onChange({ text })} />;
  }
}

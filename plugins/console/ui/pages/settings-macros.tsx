/**
 * Macros (`#/settings/macros`): a named list of actions an agent runs on a conversation in one
 * click (assign, label, prioritise, change the status, reply, note). Workspace macros are every
 * member's; personal ones only their creator's. The builder (new and edit) is in settings-macro-builder.tsx.
 */
import { useState } from 'preact/hooks';
import { Card, Dialog, EmptyState, ErrorNote, Loading, Table } from '../components.tsx';
import { useLoad } from '../data.ts';
import { RowActions } from './settings-row-actions.tsx';
import { itemPath, loadLabels, loadMacros, loadMembers, loadTeams, type Macro, type MacroAction, type Person, type Team } from './settings-model.ts';
import { MacroBuilder } from './settings-macro-builder.tsx';

export function MacrosSection() {
  const macros = useLoad(loadMacros, []);
  const people = useLoad(loadMembers, []);
  const teams = useLoad(loadTeams, []);
  const labels = useLoad(loadLabels, []);
  const [editing, setEditing] = useState<Macro>();
  return (
    <>
      <Card title="New macro">
        <MacroBuilder people={people.data ?? []} teams={teams.data ?? []} labels={labels.data ?? []} onSaved={macros.reload} />
      </Card>
      <Card title="Macros">
        <ErrorNote error={macros.error} />
        {!macros.data ? (
          !macros.error && <Loading />
        ) : macros.data.length === 0 ? (
          <EmptyState title="No macros yet">A macro does several things to a conversation at once, e.g. label it "refund", give it to Billing and reply. Build one above.</EmptyState>
        ) : (
          <div class="settings-list">
            <Table caption="Macros" head={['Name', 'Who sees it', 'Actions', 'Manage']}>
              {macros.data.map((macro) => (
                <MacroRow macro={macro} people={people.data} teams={teams.data} onEdit={() => setEditing(macro)} onDeleted={macros.reload} />
              ))}
            </Table>
          </div>
        )}
      </Card>
      <Dialog title={editing ? `Edit macro ${editing.name}` : 'Edit macro'} open={Boolean(editing)} onClose={() => setEditing(undefined)}>
        {editing && (
          <MacroBuilder
            macro={editing}
            people={people.data ?? []}
            teams={teams.data ?? []}
            labels={labels.data ?? []}
            onSaved={async () => {
              setEditing(undefined);
              await macros.reload();
            }}
          />
        )}
      </Dialog>
    </>
  );
}

function MacroRow({ macro, people, teams, onEdit, onDeleted }: { macro: Macro; people: Person[] | undefined; teams: Team[] | undefined; onEdit: () => void; onDeleted: () => Promise<void> }) {
  return (
    <tr aria-label={`Macro ${macro.name}`}>
      <td>{macro.name}</td>
      <td>{macro.visibility === 'workspace' ? 'Everyone' : 'Its creator'}</td>
      <td>
        <ol class="settings-macro-actions">
          {macro.actions.map((a) => (
            <li>{describe(a, people, teams)}</li>
          ))}
        </ol>
      </td>
      <RowActions name={macro.name} path={itemPath('macros', macro.id)} onEdit={onEdit} onDeleted={onDeleted} />
    </tr>
  );
}

/** An action in words, naming the member or team rather than their id. */
export function describe(action: MacroAction, people: Person[] | undefined, teams: Team[] | undefined): string {
  switch (action.type) {
    case 'assign_agent':
      return action.userId ? `Assign to ${people?.find((p) => p.userId === action.userId)?.name ?? 'a member'}` : 'Unassign';
    case 'assign_team':
      return action.teamId ? `Give to team ${teams?.find((t) => t.id === action.teamId)?.name ?? '(deleted team)'}` : 'Take off its team';
    case 'add_labels':
      return `Add labels: ${action.labels.join(', ')}`;
    case 'remove_labels':
      return `Remove labels: ${action.labels.join(', ')}`;
    case 'set_priority':
      return action.priority ? `Set priority ${action.priority}` : 'Clear priority';
    case 'change_status':
      return action.status === 'SNOOZED' && action.snoozeMinutes ? `Snooze for ${action.snoozeMinutes} min` : `Set status ${action.status}`;
    case 'send_message':
      return `Reply: ${action.content}`;
    case 'add_private_note':
      return `Private note: ${action.content}`;
  }
}

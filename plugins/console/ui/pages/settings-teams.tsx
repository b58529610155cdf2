/**
 * Teams (`#/settings/teams`, `#/settings/teams/<id>`): groups of agents a conversation can be
 * given to (billing, returns…); round-robin of a team's conversation picks among its members.
 * Create one, rename it, choose its members, delete it (its conversations keep their assignee).
 */
import { useState } from 'preact/hooks';
import { del, get, patch, post, put } from '../api.ts';
import { Button, Card, ConfirmButton, EmptyState, ErrorNote, Loading, Notice, Table, TextField } from '../components.tsx';
import { useAction, useLoad } from '../data.ts';
import { href, navigate } from '../router.ts';
import { itemPath, loadMembers, loadTeams, type Team } from './settings-model.ts';
import { PeoplePicker } from './settings-people.tsx';

export function TeamsSection({ id }: { id: string | undefined }) {
  return id ? <TeamSettings id={id} /> : <TeamList />;
}

function TeamList() {
  const teams = useLoad(loadTeams, []);
  return (
    <>
      <Card title="New team">
        <NewTeam onCreated={(team) => navigate('settings', 'teams', team.id)} />
      </Card>
      <Card title="Teams">
        <ErrorNote error={teams.error} />
        {!teams.data ? (
          !teams.error && <Loading />
        ) : teams.data.length === 0 ? (
          <EmptyState title="No teams yet">A team groups agents, so a conversation can be handed to "Billing" rather than to one person. Create one above.</EmptyState>
        ) : (
          <div class="settings-list">
            <Table caption="Teams" head={['Name', 'Description', 'Members']}>
              {teams.data.map((team) => (
                <tr>
                  <td>
                    <a href={href('settings', 'teams', team.id)}>{team.name}</a>
                  </td>
                  <td>{team.description ?? <span class="muted">—</span>}</td>
                  <td>{team.members.length === 0 ? <span class="muted">nobody yet</span> : team.members.map((m) => m.name || m.email).join(', ')}</td>
                </tr>
              ))}
            </Table>
          </div>
        )}
      </Card>
    </>
  );
}

function NewTeam({ onCreated }: { onCreated: (team: Team) => void }) {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const create = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const team = await create.run(() => post<Team>('/v3/helpdesk/teams', { name, ...(description.trim() && { description }) }));
    if (team) onCreated(team);
  };
  return (
    <form class="stack" onSubmit={submit} aria-label="New team">
      <div class="settings-fields">
        <TextField label="Team name" required maxLength={120} value={name} onValue={setName} />
        <TextField label="Description (optional)" value={description} onValue={setDescription} />
      </div>
      <div class="form-actions">
        <Button type="submit" pending={create.pending}>
          Create team
        </Button>
      </div>
      <ErrorNote error={create.error} prefix="No team was created." />
    </form>
  );
}

function TeamSettings({ id }: { id: string }) {
  const team = useLoad(() => get<Team>(itemPath('teams', id)), [id]);
  const people = useLoad(loadMembers, []);
  const remove = useAction();
  const back = (
    <p>
      <a href={href('settings', 'teams')}>← Teams</a>
    </p>
  );
  if (!team.data) {
    return (
      <>
        {back}
        <ErrorNote error={team.error} />
        {!team.error && <Loading rows={3} label="Loading the team" />}
      </>
    );
  }
  const current = team.data;
  return (
    <>
      {back}
      <h2 class="settings-title">{current.name}</h2>
      <Card title="Name and description">
        <TeamForm team={current} onSaved={team.reload} />
      </Card>
      <Card title="Members">
        <PeoplePicker
          legend="Members of this team"
          people={people}
          chosen={current.members.map((m) => m.userId)}
          onSave={async (userIds) => {
            await put(itemPath('teams', id, '/members'), { userIds });
            await team.reload();
            return true;
          }}
        />
      </Card>
      <Card title="Delete this team">
        <p class="muted">The team is taken off its conversations; whoever holds them keeps them.</p>
        <ConfirmButton
          confirm="Delete the team?"
          pending={remove.pending}
          onConfirm={async () => {
            if (await remove.run(() => del(itemPath('teams', id)))) navigate('settings', 'teams');
          }}
        >
          Delete team
        </ConfirmButton>
        <ErrorNote error={remove.error} prefix="The team was not deleted." />
      </Card>
    </>
  );
}

function TeamForm({ team, onSaved }: { team: Team; onSaved: () => Promise<void> }) {
  const [name, setName] = useState(team.name);
  const [description, setDescription] = useState(team.description ?? '');
  const [saved, setSaved] = useState(false);
  const save = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    setSaved(false);
    if (await save.run(() => patch<Team>(itemPath('teams', team.id), { name, description: description.trim() || null }))) {
      setSaved(true);
      await onSaved();
    }
  };
  return (
    <form class="stack" onSubmit={submit} aria-label="Team name and description">
      <div class="settings-fields">
        <TextField label="Team name" required maxLength={120} value={name} onValue={setName} />
        <TextField label="Description" value={description} onValue={setDescription} />
      </div>
      <div class="form-actions">
        <Button type="submit" pending={save.pending}>
          Save
        </Button>
      </div>
      <ErrorNote error={save.error} prefix="Nothing was changed." />
      {saved && <Notice>Team saved.</Notice>}
    </form>
  );
}

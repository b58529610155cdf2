/**
 * Choosing who belongs to an inbox or a team: every member of the workspace with a tick, saved at
 * once as the whole list (`PUT …/members { userIds }` replaces it, as the API does).
 */
import { useEffect, useState } from 'preact/hooks';
import { Button, Checkbox, EmptyState, ErrorNote, Loading, Notice } from '../components.tsx';
import { useAction, type Loaded } from '../data.ts';
import { personLabel, type Person } from './settings-model.ts';

export function PeoplePicker({
  legend,
  people,
  chosen,
  onSave,
  saveLabel = 'Save members',
}: {
  legend: string;
  people: Loaded<Person[]>;
  /** The user ids that belong now (undefined while they load). */
  chosen: string[] | undefined;
  onSave: (userIds: string[]) => Promise<unknown>;
  saveLabel?: string;
}) {
  const [ticked, setTicked] = useState<string[] | undefined>(chosen);
  const [saved, setSaved] = useState(false);
  const save = useAction();
  useEffect(() => setTicked(chosen), [chosen?.join(',')]);

  if (people.error) return <ErrorNote error={people.error} prefix="The workspace's members could not be read." />;
  if (!people.data || !ticked) return <Loading rows={2} label="Loading members" />;
  if (people.data.length === 0) return <EmptyState title="No members yet">Invite people on the Members page first.</EmptyState>;

  const toggle = (userId: string, on: boolean) => {
    setSaved(false);
    setTicked((now = []) => (on ? [...now.filter((id) => id !== userId), userId] : now.filter((id) => id !== userId)));
  };
  const submit = async (e: Event) => {
    e.preventDefault();
    setSaved(false);
    if ((await save.run(() => onSave(ticked))) !== undefined) setSaved(true);
  };

  return (
    <form onSubmit={submit} aria-label={legend}>
      <fieldset>
        <legend>{legend}</legend>
        <div class="choices">
          {people.data.map((p) => (
            <Checkbox label={personLabel(p)} checked={ticked.includes(p.userId)} onChecked={(on) => toggle(p.userId, on)} hint={p.roles?.join(', ').toLowerCase()} />
          ))}
        </div>
      </fieldset>
      <div class="form-actions">
        <Button type="submit" pending={save.pending}>
          {saveLabel}
        </Button>
      </div>
      <ErrorNote error={save.error} prefix="The members were not changed." />
      {saved && <Notice>Members saved.</Notice>}
    </form>
  );
}

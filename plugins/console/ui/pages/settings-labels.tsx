/**
 * Labels (`#/settings/labels`): the workspace's tags for conversations, with a colour and a
 * description. Renaming one renames it on every conversation; deleting takes it off them all.
 */
import { useState } from 'preact/hooks';
import { patch, post } from '../api.ts';
import { Button, Card, Dialog, EmptyState, ErrorNote, Loading, Table, TextField } from '../components.tsx';
import { useAction, useLoad } from '../data.ts';
import { RowActions } from './settings-row-actions.tsx';
import { itemPath, loadLabels, type Label } from './settings-model.ts';

const DEFAULT_COLOUR = '#2456c7';

export function LabelsSection() {
  const labels = useLoad(loadLabels, []);
  const [editing, setEditing] = useState<Label>();
  return (
    <>
      <Card title="New label">
        <LabelForm submitLabel="Create label" onSave={(body) => post('/v3/helpdesk/labels', body)} onSaved={labels.reload} clearAfter />
      </Card>
      <Card title="Labels">
        <ErrorNote error={labels.error} />
        {!labels.data ? (
          !labels.error && <Loading />
        ) : labels.data.length === 0 ? (
          <EmptyState title="No labels yet">Labels sort conversations (refund, vip, bug) and filter the inbox. Create one above; agents can also label a conversation with a new name.</EmptyState>
        ) : (
          <div class="settings-list">
            <Table caption="Labels" head={['Label', 'Description', 'Actions']}>
              {labels.data.map((label) => (
                <LabelRow label={label} onEdit={() => setEditing(label)} onDeleted={labels.reload} />
              ))}
            </Table>
          </div>
        )}
      </Card>
      <Dialog title={editing ? `Edit label ${editing.name}` : 'Edit label'} open={Boolean(editing)} onClose={() => setEditing(undefined)}>
        {editing && (
          <LabelForm
            label={editing}
            submitLabel="Save label"
            onSave={(body) => patch(itemPath('labels', editing.id), body)}
            onSaved={async () => {
              setEditing(undefined);
              await labels.reload();
            }}
          />
        )}
      </Dialog>
    </>
  );
}

function LabelRow({ label, onEdit, onDeleted }: { label: Label; onEdit: () => void; onDeleted: () => Promise<void> }) {
  return (
    <tr aria-label={`Label ${label.name}`}>
      <td>
        <span class="settings-label">
          <span class="settings-swatch" style={{ background: label.color ?? 'transparent' }} aria-hidden="true" />
          {label.name}
        </span>
      </td>
      <td>{label.description ?? <span class="muted">—</span>}</td>
      <RowActions name={label.name} path={itemPath('labels', label.id)} confirm="Take it off every conversation?" onEdit={onEdit} onDeleted={onDeleted} />
    </tr>
  );
}

interface LabelBody {
  name: string;
  color: string | null;
  description: string | null;
}

function LabelForm({
  label,
  submitLabel,
  onSave,
  onSaved,
  clearAfter,
}: {
  label?: Label;
  submitLabel: string;
  onSave: (body: LabelBody) => Promise<unknown>;
  onSaved: () => Promise<void>;
  clearAfter?: boolean;
}) {
  const [name, setName] = useState(label?.name ?? '');
  const [color, setColor] = useState(label?.color ?? DEFAULT_COLOUR);
  const [description, setDescription] = useState(label?.description ?? '');
  const save = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    if (await save.run(async () => (await onSave({ name, color, description: description.trim() || null })) ?? true)) {
      if (clearAfter) {
        setName('');
        setDescription('');
      }
      await onSaved();
    }
  };
  return (
    <form class="stack" onSubmit={submit} aria-label={submitLabel}>
      <div class="settings-fields">
        <TextField label="Label name" required maxLength={100} value={name} onValue={setName} hint="No commas; unique whatever the case." />
        <TextField label="Colour" type="color" class="settings-colour" value={color} onValue={setColor} />
        <TextField label="Description (optional)" value={description} onValue={setDescription} />
      </div>
      <div class="form-actions">
        <Button type="submit" pending={save.pending}>
          {submitLabel}
        </Button>
      </div>
      <ErrorNote error={save.error} prefix={label ? 'Nothing was changed.' : 'No label was created.'} />
    </form>
  );
}

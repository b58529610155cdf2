/**
 * SLA policies (`#/settings/sla-policies`): how fast conversations of some inboxes must get a
 * first reply, each later reply, and be resolved. A new conversation of a listed inbox gets its
 * policy when it opens; an inbox has one policy at most (the API answers 409).
 */
import { useState } from 'preact/hooks';
import { patch, post } from '../api.ts';
import { Button, Card, Checkbox, Dialog, EmptyState, ErrorNote, Loading, Table, TextField } from '../components.tsx';
import { useAction, useLoad } from '../data.ts';
import { RowActions } from './settings-row-actions.tsx';
import { everyPage, itemPath, loadInboxes, type Inbox } from './settings-model.ts';

interface SlaPolicy {
  id: string;
  name: string;
  description: string | null;
  firstResponseMinutes: number | null;
  nextResponseMinutes: number | null;
  resolutionMinutes: number | null;
  onlyBusinessHours: boolean;
  inboxIds: string[];
}
type PolicyBody = Omit<SlaPolicy, 'id'>;

const TARGETS = [
  { key: 'firstResponseMinutes', label: 'First reply within (minutes)' },
  { key: 'nextResponseMinutes', label: 'Each later reply within (minutes)' },
  { key: 'resolutionMinutes', label: 'Resolved within (minutes)' },
] as const;

/** Minutes in words: 90 → "1 h 30 min", 2880 → "2 d". */
function duration(minutes: number | null): string {
  if (minutes === null) return '—';
  const days = Math.floor(minutes / 1440);
  const hours = Math.floor((minutes % 1440) / 60);
  const rest = minutes % 60;
  return [days && `${days} d`, hours && `${hours} h`, rest && `${rest} min`].filter(Boolean).join(' ');
}

export function SlaSection() {
  const policies = useLoad(() => everyPage<SlaPolicy>('/v3/helpdesk/sla-policies'), []);
  const inboxes = useLoad(loadInboxes, []);
  const [editing, setEditing] = useState<SlaPolicy>();
  const inboxName = (id: string) => inboxes.data?.find((i) => i.id === id)?.name ?? 'an inbox';
  return (
    <>
      <Card title="New SLA policy">
        <PolicyForm inboxes={inboxes.data ?? []} submitLabel="Create SLA policy" onSave={(body) => post('/v3/helpdesk/sla-policies', body)} onSaved={policies.reload} clearAfter />
      </Card>
      <Card title="SLA policies">
        <ErrorNote error={policies.error} />
        {!policies.data ? (
          !policies.error && <Loading />
        ) : policies.data.length === 0 ? (
          <EmptyState title="No SLA policies yet">A policy sets how fast conversations must be answered and resolved; missed targets show in reports and reach helpdesk webhooks.</EmptyState>
        ) : (
          <div class="settings-list">
            <Table caption="SLA policies" head={['Name', 'First reply', 'Later replies', 'Resolution', 'Clock', 'Inboxes', 'Actions']}>
              {policies.data.map((p) => (
                <PolicyRow policy={p} inboxNames={p.inboxIds.map(inboxName)} onEdit={() => setEditing(p)} onDeleted={policies.reload} />
              ))}
            </Table>
          </div>
        )}
      </Card>
      <Dialog title={editing ? `Edit SLA policy ${editing.name}` : 'Edit SLA policy'} open={Boolean(editing)} onClose={() => setEditing(undefined)}>
        {editing && (
          <PolicyForm
            policy={editing}
            inboxes={inboxes.data ?? []}
            submitLabel="Save SLA policy"
            onSave={(body) => patch(itemPath('sla-policies', editing.id), body)}
            onSaved={async () => {
              setEditing(undefined);
              await policies.reload();
            }}
          />
        )}
      </Dialog>
    </>
  );
}

function PolicyRow({ policy, inboxNames, onEdit, onDeleted }: { policy: SlaPolicy; inboxNames: string[]; onEdit: () => void; onDeleted: () => Promise<void> }) {
  return (
    <tr aria-label={`SLA policy ${policy.name}`}>
      <td>
        {policy.name}
        {policy.description && <small class="hint">{policy.description}</small>}
      </td>
      <td>{duration(policy.firstResponseMinutes)}</td>
      <td>{duration(policy.nextResponseMinutes)}</td>
      <td>{duration(policy.resolutionMinutes)}</td>
      <td>{policy.onlyBusinessHours ? 'Business hours' : 'Around the clock'}</td>
      <td>{inboxNames.length === 0 ? <span class="muted">none</span> : inboxNames.join(', ')}</td>
      <RowActions name={policy.name} path={itemPath('sla-policies', policy.id)} onEdit={onEdit} onDeleted={onDeleted} />
    </tr>
  );
}

function PolicyForm({
  policy,
  inboxes,
  submitLabel,
  onSave,
  onSaved,
  clearAfter,
}: {
  policy?: SlaPolicy;
  inboxes: Inbox[];
  submitLabel: string;
  onSave: (body: PolicyBody) => Promise<unknown>;
  onSaved: () => Promise<void>;
  clearAfter?: boolean;
}) {
  const initial = () => ({
    name: policy?.name ?? '',
    description: policy?.description ?? '',
    firstResponseMinutes: policy?.firstResponseMinutes?.toString() ?? '',
    nextResponseMinutes: policy?.nextResponseMinutes?.toString() ?? '',
    resolutionMinutes: policy?.resolutionMinutes?.toString() ?? '',
    onlyBusinessHours: policy?.onlyBusinessHours ?? true,
    inboxIds: policy?.inboxIds ?? [],
  });
  const [form, setForm] = useState(initial);
  const save = useAction();
  const minutes = (text: string) => (text.trim() === '' ? null : Number(text));
  const submit = async (e: Event) => {
    e.preventDefault();
    const body: PolicyBody = {
      name: form.name,
      description: form.description.trim() || null,
      firstResponseMinutes: minutes(form.firstResponseMinutes),
      nextResponseMinutes: minutes(form.nextResponseMinutes),
      resolutionMinutes: minutes(form.resolutionMinutes),
      onlyBusinessHours: form.onlyBusinessHours,
      inboxIds: form.inboxIds,
    };
    if (await save.run(async () => (await onSave(body)) ?? true)) {
      if (clearAfter) setForm(initial());
      await onSaved();
    }
  };
  const toggleInbox = (id: string, on: boolean) => setForm({ ...form, inboxIds: on ? [...form.inboxIds.filter((i) => i !== id), id] : form.inboxIds.filter((i) => i !== id) });
  return (
    <form class="stack" onSubmit={submit} aria-label={submitLabel}>
      <div class="settings-fields">
        <TextField label="Policy name" required maxLength={120} value={form.name} onValue={(name) => setForm({ ...form, name })} />
        <TextField label="Description (optional)" value={form.description} onValue={(description) => setForm({ ...form, description })} />
      </div>
      <div class="settings-fields">
        {TARGETS.map((t) => (
          <TextField label={t.label} type="number" min={1} step={1} value={form[t.key]} onValue={(value) => setForm({ ...form, [t.key]: value })} />
        ))}
      </div>
      <p class="hint">At least one target; an empty one is not measured.</p>
      <Checkbox label="Count only business hours" hint="The clock stops while the inbox is closed (an inbox without business hours is always open)." checked={form.onlyBusinessHours} onChecked={(onlyBusinessHours) => setForm({ ...form, onlyBusinessHours })} />
      <fieldset>
        <legend>Inboxes it applies to</legend>
        {inboxes.length === 0 ? (
          <p class="muted">No inboxes yet.</p>
        ) : (
          <div class="choices">
            {inboxes.map((inbox) => (
              <Checkbox label={inbox.name} checked={form.inboxIds.includes(inbox.id)} onChecked={(on) => toggleInbox(inbox.id, on)} />
            ))}
          </div>
        )}
      </fieldset>
      <div class="form-actions">
        <Button type="submit" pending={save.pending}>
          {submitLabel}
        </Button>
      </div>
      <ErrorNote error={save.error} prefix={policy ? 'Nothing was changed.' : 'No SLA policy was created.'} />
    </form>
  );
}

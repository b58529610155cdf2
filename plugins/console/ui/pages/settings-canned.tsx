/**
 * Canned responses (`#/settings/canned-responses`): ready answers an agent inserts by typing `/`
 * and the short code at the start of the composer.
 */
import { useState } from 'preact/hooks';
import { patch, post } from '../api.ts';
import { Button, Card, Dialog, EmptyState, ErrorNote, Loading, Table, TextArea, TextField } from '../components.tsx';
import { useAction, useLoad } from '../data.ts';
import { RowActions } from './settings-row-actions.tsx';
import { itemPath, loadCannedResponses, type CannedResponse } from './settings-model.ts';

export function CannedResponsesSection() {
  const responses = useLoad(loadCannedResponses, []);
  const [editing, setEditing] = useState<CannedResponse>();
  return (
    <>
      <Card title="New canned response">
        <CannedForm submitLabel="Create canned response" onSave={(body) => post('/v3/helpdesk/canned-responses', body)} onSaved={responses.reload} clearAfter />
      </Card>
      <Card title="Canned responses">
        <ErrorNote error={responses.error} />
        {!responses.data ? (
          !responses.error && <Loading />
        ) : responses.data.length === 0 ? (
          <EmptyState title="No canned responses yet">
            A canned response is an answer written once: in a conversation, type <span class="mono">/</span> and its short code to insert it. Create one above.
          </EmptyState>
        ) : (
          <div class="settings-list">
            <Table caption="Canned responses" head={['Short code', 'Content', 'Actions']}>
              {responses.data.map((response) => (
                <CannedRow response={response} onEdit={() => setEditing(response)} onDeleted={responses.reload} />
              ))}
            </Table>
          </div>
        )}
      </Card>
      <Dialog title={editing ? `Edit /${editing.shortCode}` : 'Edit canned response'} open={Boolean(editing)} onClose={() => setEditing(undefined)}>
        {editing && (
          <CannedForm
            response={editing}
            submitLabel="Save canned response"
            onSave={(body) => patch(itemPath('canned-responses', editing.id), body)}
            onSaved={async () => {
              setEditing(undefined);
              await responses.reload();
            }}
          />
        )}
      </Dialog>
    </>
  );
}

function CannedRow({ response, onEdit, onDeleted }: { response: CannedResponse; onEdit: () => void; onDeleted: () => Promise<void> }) {
  return (
    <tr aria-label={`Canned response /${response.shortCode}`}>
      <td class="mono">/{response.shortCode}</td>
      <td class="message-text settings-canned">{response.content}</td>
      <RowActions name={`/${response.shortCode}`} path={itemPath('canned-responses', response.id)} onEdit={onEdit} onDeleted={onDeleted} />
    </tr>
  );
}

function CannedForm({
  response,
  submitLabel,
  onSave,
  onSaved,
  clearAfter,
}: {
  response?: CannedResponse;
  submitLabel: string;
  onSave: (body: { shortCode: string; content: string }) => Promise<unknown>;
  onSaved: () => Promise<void>;
  clearAfter?: boolean;
}) {
  const [shortCode, setShortCode] = useState(response?.shortCode ?? '');
  const [content, setContent] = useState(response?.content ?? '');
  const save = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    if (await save.run(async () => (await onSave({ shortCode, content })) ?? true)) {
      if (clearAfter) {
        setShortCode('');
        setContent('');
      }
      await onSaved();
    }
  };
  return (
    <form class="stack" onSubmit={submit} aria-label={submitLabel}>
      <TextField label="Short code" required maxLength={51} value={shortCode} onValue={setShortCode} hint="Letters, digits, _ or -, up to 50; agents type / and this code." />
      <TextArea label="Content" required value={content} onValue={setContent} rows={4} />
      <div class="form-actions">
        <Button type="submit" pending={save.pending}>
          {submitLabel}
        </Button>
      </div>
      <ErrorNote error={save.error} prefix={response ? 'Nothing was changed.' : 'No canned response was created.'} />
    </form>
  );
}

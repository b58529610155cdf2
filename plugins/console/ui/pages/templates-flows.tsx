/**
 * WhatsApp Flows of an official number: create a Flow from its JSON (published at once when
 * the platform finds nothing wrong; its findings listed when it does), and the number's Flow
 * encryption key, which a data-exchange Flow needs before it can be created. These routes come
 * from the flows plugin: when it is off they answer 404, and the card says so.
 */
import { useState } from 'preact/hooks';
import { ApiError, get, post, put } from '../api.ts';
import { Button, Card, Checkbox, ConfirmButton, EmptyState, ErrorNote, Loading, Notice, SecretBox, StatusBadge, TextArea, TextField, When } from '../components.tsx';
import { useAction, useLoad } from '../data.ts';

interface FlowKey {
  phoneNumberId: string;
  registered: boolean;
  dataExchangeUrl: string | null;
  registeredAt: string | null;
}

interface CreatedFlow {
  id: string;
  name: string;
  kind: string;
  status: string;
  validation_errors: { error?: string; error_type?: string; message?: string }[];
}

export function Flows({ connectionId, writes }: { connectionId: string; writes: boolean }) {
  const key = useLoad(() => get<FlowKey>(`/v3/connections/${connectionId}/flows-encryption`), [connectionId]);
  const off = key.error instanceof ApiError && key.error.status === 404 && !key.error.messages.includes('CONNECTION_NOT_FOUND');

  if (off) {
    return (
      <Card title="Flows">
        <EmptyState title="The flows plugin is off on this service">The operator enables it in the service's plugin settings; then Flows can be created here.</EmptyState>
      </Card>
    );
  }
  return (
    <>
      <Card title="Flow encryption">
        <ErrorNote error={key.error} />
        {!key.data ? !key.error && <Loading rows={1} /> : <KeyStatus connectionId={connectionId} flowKey={key.data} writes={writes} onChanged={key.reload} />}
      </Card>
      {writes && <NewFlow connectionId={connectionId} />}
    </>
  );
}

function KeyStatus({ connectionId, flowKey, writes, onChanged }: { connectionId: string; flowKey: FlowKey; writes: boolean; onChanged: () => Promise<void> }) {
  const action = useAction();
  const provision = (rotate: boolean) => () => void action.run(() => put(`/v3/connections/${connectionId}/flows-encryption`, rotate ? { rotate: true } : {})).then((r) => r && onChanged());
  return (
    <div class="stack">
      <p>
        <StatusBadge status={flowKey.registered ? 'REGISTERED' : 'NOT REGISTERED'} />{' '}
        {flowKey.registered ? (
          <span class="muted">
            Key of number {flowKey.phoneNumberId} registered with the platform <When at={flowKey.registeredAt} />.
          </span>
        ) : (
          <span class="muted">Data-exchange Flows need the number's key pair, registered with the platform (it needs the connection's app secret).</span>
        )}
      </p>
      {flowKey.dataExchangeUrl && <SecretBox label="Data exchange URL" value={flowKey.dataExchangeUrl} />}
      <ErrorNote error={action.error} />
      {writes && (
        <div class="actions">
          <Button onClick={provision(false)} pending={action.pending}>
            {flowKey.registered ? 'Register the key again' : 'Provision the key'}
          </Button>
          {flowKey.registered && (
            <ConfirmButton variant="secondary" confirm="Replace the key pair?" onConfirm={provision(true)} pending={action.pending}>
              Rotate the key
            </ConfirmButton>
          )}
        </div>
      )}
    </div>
  );
}

function NewFlow({ connectionId }: { connectionId: string }) {
  const [name, setName] = useState('');
  const [flowJson, setFlowJson] = useState('');
  const [publish, setPublish] = useState(true);
  const [created, setCreated] = useState<CreatedFlow | undefined>();
  const action = useAction();

  const submit = async (event: Event) => {
    event.preventDefault();
    setCreated(undefined);
    const flow = await action.run(() => post<CreatedFlow>(`/v3/connections/${connectionId}/flows`, { flowJson, publish, ...(name.trim() && { name: name.trim() }) }));
    if (flow) setCreated(flow);
  };

  return (
    <Card title="New Flow">
      <form onSubmit={submit}>
        <TextField label="Flow name (optional)" value={name} onValue={setName} hint="Unique on the business account; made up when empty." />
        <TextArea label="Flow JSON" value={flowJson} onValue={setFlowJson} rows={10} required class="mono" placeholder='{"version": "6.0", "screens": [ … ]}' />
        <Checkbox label="Publish when the platform finds no errors" checked={publish} onChecked={setPublish} />
        <ErrorNote error={action.error} prefix="The Flow was not created." />
        <div class="form-actions">
          <Button type="submit" pending={action.pending}>
            Create Flow
          </Button>
        </div>
      </form>
      {created && <FlowResult flow={created} />}
    </Card>
  );
}

function FlowResult({ flow }: { flow: CreatedFlow }) {
  return (
    <div class="stack" aria-live="polite">
      <Notice>
        Flow <span class="mono">{flow.name}</span> ({flow.kind.replace('_', ' ')}) created as <StatusBadge status={flow.status} />. Its id for sending: <span class="mono">{flow.id}</span>
      </Notice>
      {flow.validation_errors.length > 0 && (
        <div class="warning" role="alert">
          <strong>The platform found problems, so the Flow stays a draft:</strong>
          <ul>
            {flow.validation_errors.map((e) => (
              <li>
                {e.error_type && <span class="mono">{e.error_type}: </span>}
                {e.message ?? e.error ?? JSON.stringify(e)}
              </li>
            ))}
          </ul>
        </div>
      )}
    </div>
  );
}

/**
 * Connections: the workspace's numbers on the network — a list with each one's live status
 * (`#/connections`) and one connection's page (`#/connections/<id>`) to pair it, try it and
 * manage it. Status, QR codes and pairing codes are polled every 2 seconds while visible.
 */
import { useState } from 'preact/hooks';
import { get, post } from '../api.ts';
import { Button, Card, Dialog, EmptyState, ErrorNote, Loading, PageHeader, SelectField, StatusBadge, Table, TextField, When } from '../components.tsx';
import { useAction, useLoad } from '../data.ts';
import { href, navigate, type Route } from '../router.ts';
import { useSession } from '../session.ts';
import { ConnectionDetail } from './connections-detail.tsx';
import { DRIVERS, driverName, phoneOf, type Connection, type Driver } from './connections-model.ts';

export function ConnectionsPage({ route }: { route: Route }) {
  const id = route.parts[1];
  return id ? <ConnectionDetail id={id} /> : <ConnectionList />;
}

function ConnectionList() {
  const { may } = useSession();
  const [creating, setCreating] = useState(false);
  const connections = useLoad(() => get<Connection[]>('/v3/connections'), [], { every: 2000 });
  const list = connections.data;

  return (
    <>
      <PageHeader
        title="Connections"
        description="Each connection is one number on the network. Pair it, then send and receive through the API."
        actions={may('connections', 'write') && <Button onClick={() => setCreating(true)}>New connection</Button>}
      />
      <Card title="Your connections">
        <ErrorNote error={connections.error} prefix="The connections could not be read." />
        {!list ? (
          connections.error ? null : <Loading label="Loading connections" />
        ) : list.length === 0 ? (
          <EmptyState title="No connections yet">
            {may('connections', 'write')
              ? 'Create one with “New connection”. A sandbox connection needs no phone: it simulates the network so you can try everything.'
              : 'An Owner, Admin or Manager of this workspace can create one.'}
          </EmptyState>
        ) : (
          <Table caption="Connections" head={['Name', 'Driver', 'Phone number', 'Status', 'Since']}>
            {list.map((c) => (
              <tr>
                <td>
                  <a href={href('connections', c.id)}>{c.name}</a>
                </td>
                <td>{driverName(c.driver)}</td>
                <td class="mono">{phoneOf(c.phoneNumber)}</td>
                <td>
                  <StatusBadge status={c.status} />
                </td>
                <td>
                  <When at={c.updatedAt} />
                </td>
              </tr>
            ))}
          </Table>
        )}
      </Card>
      <Dialog title="New connection" open={creating} onClose={() => setCreating(false)}>
        <CreateConnectionForm
          onCreated={(created) => {
            setCreating(false);
            navigate('connections', created.id);
          }}
        />
      </Dialog>
    </>
  );
}

const CREDENTIAL_FIELDS = [
  { key: 'phoneNumberId', label: 'Phone number ID', hint: 'From the WhatsApp Manager, under the phone number.' },
  { key: 'businessAccountId', label: 'WhatsApp Business Account ID' },
  { key: 'accessToken', label: 'Access token', hint: 'A permanent system-user token with whatsapp_business_messaging.', secret: true },
  { key: 'appSecret', label: 'App secret', hint: 'Checks the signature of the platform’s callbacks.', secret: true },
  { key: 'verifyToken', label: 'Verify token', hint: 'Any text; type the same in the callback settings of your app.' },
] as const;

type CredentialKey = (typeof CREDENTIAL_FIELDS)[number]['key'];

function CreateConnectionForm({ onCreated }: { onCreated: (created: Connection) => void }) {
  const [name, setName] = useState('');
  const [driver, setDriver] = useState<Driver>('sandbox');
  const [credentials, setCredentials] = useState<Partial<Record<CredentialKey, string>>>({});
  const action = useAction();

  const submit = async (event: Event) => {
    event.preventDefault();
    const body = driver === 'cloud-api' ? { name, driver, credentials } : { name, driver };
    const created = await action.run(() => post<Connection>('/v3/connections', body));
    if (created) onCreated(created);
  };

  return (
    <form class="stack" onSubmit={submit}>
      <TextField label="Name" value={name} onValue={setName} required maxLength={120} hint="For you: “Support line”, “Sales”." />
      <SelectField label="Driver" value={driver} options={DRIVERS} onValue={setDriver} />
      {driver === 'baileys' && <p class="hint">After creating it, press Connect and scan the QR code with the phone (WhatsApp → Linked devices).</p>}
      {driver === 'cloud-api' && (
        <fieldset class="stack">
          <legend>Cloud API credentials</legend>
          {CREDENTIAL_FIELDS.map((field) => (
            <TextField
              label={field.label}
              hint={'hint' in field ? field.hint : undefined}
              type={'secret' in field ? 'password' : 'text'}
              autoComplete="off"
              value={credentials[field.key] ?? ''}
              onValue={(value) => setCredentials((c) => ({ ...c, [field.key]: value }))}
              required
            />
          ))}
        </fieldset>
      )}
      <ErrorNote error={action.error} prefix="Not created." />
      <div class="form-actions">
        <Button type="submit" pending={action.pending}>
          Create
        </Button>
      </div>
    </form>
  );
}

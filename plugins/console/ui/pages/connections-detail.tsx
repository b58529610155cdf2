/**
 * One connection (`#/connections/<id>`): its live status and the actions that status allows,
 * the QR code and pairing code while pairing, its name, a test message and — on the sandbox
 * network — a simulated contact, so everything can be tried without a phone.
 */
import { useState } from 'preact/hooks';
import { del, get, patch, post } from '../api.ts';
import { Button, Card, ConfirmButton, ErrorNote, Loading, PageHeader, StatusBadge, TextField, When } from '../components.tsx';
import { useAction, useLoad } from '../data.ts';
import { href, navigate } from '../router.ts';
import { useSession } from '../session.ts';
import { driverName, phoneOf, type Connection } from './connections-model.ts';
import { ContactSimulator } from './connections-sandbox.tsx';
import { TestMessage } from './connections-test-message.tsx';

export function ConnectionDetail({ id }: { id: string }) {
  const { may } = useSession();
  const connection = useLoad(() => get<Connection>(`/v3/connections/${encodeURIComponent(id)}`), [id], { every: 2000 });
  // The contact a test message went to is the one the simulator answers as.
  const [contact, setContact] = useState('');
  const c = connection.data;

  return (
    <>
      <p>
        <a href={href('connections')}>← All connections</a>
      </p>
      <PageHeader title={c?.name ?? 'Connection'} description={c && [driverName(c.driver), c.phoneNumber && phoneOf(c.phoneNumber)].filter(Boolean).join(' · ')} />
      <ErrorNote error={connection.error} prefix="The connection could not be read." />
      {!c ? (
        connection.error ? null : <Loading rows={4} label="Loading the connection" />
      ) : (
        <>
          <StatusCard connection={c} canWrite={may('connections', 'write')} reload={connection.reload} />
          {c.status === 'QR_PENDING' && <Pairing connection={c} />}
          {may('messages.send', 'write') && <TestMessage connection={c} onSent={setContact} />}
          {c.driver === 'sandbox' && may('connections', 'write') && <ContactSimulator connection={c} contact={contact} onContact={setContact} />}
          {may('connections', 'write') && <Settings connection={c} reload={connection.reload} />}
        </>
      )}
    </>
  );
}

const HELP: Record<Connection['status'], string> = {
  DISCONNECTED: 'Not connected. Connect to open the session (a first connect of a QR connection shows a code to scan).',
  CONNECTING: 'Opening the session with the network…',
  QR_PENDING: 'Waiting for the phone: scan the QR code or type the pairing code below.',
  CONNECTED: 'Connected: messages are sent and received.',
  LOGGED_OUT: 'The pairing ended. Connect to pair again from a new QR code.',
};

function StatusCard({ connection, canWrite, reload }: { connection: Connection; canWrite: boolean; reload: () => Promise<void> }) {
  const action = useAction();
  const path = `/v3/connections/${encodeURIComponent(connection.id)}`;
  const act = async (verb: 'connect' | 'disconnect' | 'logout') => {
    await action.run(() => post(`${path}/${verb}`));
    await reload();
  };
  const remove = async () => {
    const done = await action.run(() => del(path));
    if (done !== undefined) navigate('connections');
  };
  const { status } = connection;
  const open = status === 'CONNECTED' || status === 'CONNECTING' || status === 'QR_PENDING';

  return (
    <Card title="Status">
      <div class="stack">
        <p class="row" id="connection-status">
          <StatusBadge status={status} /> <span>{HELP[status]}</span>
        </p>
        {connection.statusReason && <p class="hint">Reason: {connection.statusReason}</p>}
        <dl class="facts">
          <dt>Phone number</dt>
          <dd class="mono">{phoneOf(connection.phoneNumber)}</dd>
          <dt>Driver</dt>
          <dd>{driverName(connection.driver)}</dd>
          <dt>Last change</dt>
          <dd>
            <When at={connection.updatedAt} />
          </dd>
          <dt>Connection id</dt>
          <dd class="mono">{connection.id}</dd>
        </dl>
        <ErrorNote error={action.error} />
        {canWrite && (
          <div class="form-actions">
            {!open && (
              <Button pending={action.pending} onClick={() => act('connect')}>
                Connect
              </Button>
            )}
            {open && (
              <Button variant="secondary" pending={action.pending} onClick={() => act('disconnect')}>
                Disconnect
              </Button>
            )}
            {status !== 'LOGGED_OUT' && (
              <ConfirmButton variant="secondary" confirm="Log out: confirm" pending={action.pending} onConfirm={() => act('logout')}>
                Log out
              </ConfirmButton>
            )}
            <ConfirmButton confirm="Delete: confirm" pending={action.pending} onConfirm={remove}>
              Delete
            </ConfirmButton>
          </div>
        )}
      </div>
    </Card>
  );
}

function Pairing({ connection }: { connection: Connection }) {
  return (
    <Card title="Pair the phone">
      <div class="split">
        <div class="qr">
          {connection.qrDataUrl ? (
            <img src={connection.qrDataUrl} alt="QR code to scan with WhatsApp on the phone (Linked devices)" />
          ) : (
            <p class="muted">No QR code yet…</p>
          )}
          <p class="hint">The code changes every few seconds; this page shows the newest.</p>
        </div>
        <div class="stack">
          <p>On the phone, open WhatsApp → Settings → Linked devices → Link a device, and scan the code.</p>
          {connection.pairingCode && (
            <>
              <p>Or choose “Link with phone number instead” and type this code:</p>
              <p class="pairing-code" aria-label="Pairing code">
                {connection.pairingCode}
              </p>
            </>
          )}
        </div>
      </div>
    </Card>
  );
}

function Settings({ connection, reload }: { connection: Connection; reload: () => Promise<void> }) {
  const [name, setName] = useState(connection.name);
  const [saved, setSaved] = useState(false);
  const action = useAction();

  const submit = async (event: Event) => {
    event.preventDefault();
    setSaved(false);
    const done = await action.run(() => patch<Connection>(`/v3/connections/${encodeURIComponent(connection.id)}`, { name }));
    if (done) {
      setSaved(true);
      await reload();
    }
  };
  const credentials = Object.entries(connection.credentials ?? {});

  return (
    <Card title="Settings">
      <form class="stack" onSubmit={submit}>
        <TextField label="Connection name" value={name} onValue={(v) => (setName(v), setSaved(false))} required maxLength={120} />
        <ErrorNote error={action.error} prefix="Not renamed." />
        <div class="form-actions">
          <Button type="submit" variant="secondary" pending={action.pending} disabled={name === connection.name}>
            Rename
          </Button>
          {saved && <span role="status">Renamed.</span>}
        </div>
      </form>
      {connection.callbackUrl && (
        <p>
          Callback URL to register with the platform: <span class="mono">{connection.callbackUrl}</span>
        </p>
      )}
      {credentials.length > 0 && (
        <dl class="facts">
          {credentials.map(([key, value]) => (
            <>
              <dt>{key}</dt>
              <dd class="mono">{value}</dd>
            </>
          ))}
        </dl>
      )}
    </Card>
  );
}

/**
 * Webhooks (`#/webhooks`, `#/webhooks/<id>`): the workspace's connection webhooks — where each
 * posts, which events and connections it takes, whether it signs — with a form to add one. One
 * webhook's page (settings, signing secret, verification code, delivery log) is in
 * webhooks-detail.tsx.
 */
import { useState } from 'preact/hooks';
import { get, itemsOf } from '../api.ts';
import { Button, Card, EmptyState, ErrorNote, Loading, PageHeader, Table } from '../components.tsx';
import { useLoad } from '../data.ts';
import { href, navigate, type Route } from '../router.ts';
import { useSession } from '../session.ts';
import { WebhookDetail } from './webhooks-detail.tsx';
import { WebhookForm } from './webhooks-form.tsx';
import { connectionName, loadConnections, type Connection, type Webhook } from './webhooks-model.ts';

export function WebhooksPage({ route }: { route: Route }) {
  const id = route.parts[1];
  return id ? <WebhookDetail id={id} /> : <WebhookList />;
}

function WebhookList() {
  const session = useSession();
  const writes = session.may('connections', 'write');
  const [creating, setCreating] = useState(false);
  const webhooks = useLoad(async () => itemsOf<Webhook>(await get('/v3/webhooks', { per_page: 100 })), []);
  const connections = useLoad(loadConnections, []);

  return (
    <>
      <PageHeader
        title="Webhooks"
        description="Where the service posts the events of your connections: messages in and out, receipts, status changes."
        actions={writes && !creating && <Button onClick={() => setCreating(true)}>New webhook</Button>}
      />
      {creating && (
        <Card title="New webhook">
          <WebhookForm connections={connections.data} onCancel={() => setCreating(false)} onSaved={(saved) => navigate('webhooks', saved.id)} />
        </Card>
      )}
      <Card title="Your webhooks">
        <ErrorNote error={webhooks.error} />
        {!webhooks.data ? (
          webhooks.error ? null : <Loading />
        ) : webhooks.data.length === 0 ? (
          <EmptyState title="No webhooks yet">
            A webhook posts each event of the connections you bind to it to your URL, signed so your receiver can check it came from here.
          </EmptyState>
        ) : (
          <WebhookTable webhooks={webhooks.data} connections={connections.data} />
        )}
      </Card>
    </>
  );
}

function WebhookTable({ webhooks, connections }: { webhooks: Webhook[]; connections: Connection[] | undefined }) {
  return (
    <Table caption="Webhooks" head={['URL', 'Events', 'Connections', 'Signed', 'Batching']}>
      {webhooks.map((w) => (
        <tr>
          <td class="cell-url">
            <a href={href('webhooks', w.id)}>{w.url}</a>
          </td>
          <td>{w.events.join(', ') || <span class="muted">none</span>}</td>
          <td>{w.connections.length === 0 ? <span class="muted">none: receives nothing</span> : w.connections.map((id) => connectionName(connections, id)).join(', ')}</td>
          <td>{w.hmacEnabled ? 'Yes' : 'No'}</td>
          <td>{w.messageGroupDelay ? `${w.messageGroupDelay} s` : 'Off'}</td>
        </tr>
      ))}
    </Table>
  );
}

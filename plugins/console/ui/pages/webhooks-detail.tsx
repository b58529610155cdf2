/**
 * One webhook (`#/webhooks/<id>`): its settings (shown, or changed in the form), its signing
 * secret (revealed or rotated), code that verifies its signatures in the receiver's language, and
 * its delivery log.
 */
import { useState } from 'preact/hooks';
import { del, get, post } from '../api.ts';
import { Button, Card, ConfirmButton, ErrorNote, Loading, Notice, PageHeader, SecretBox, When } from '../components.tsx';
import { useAction, useLoad } from '../data.ts';
import { href, navigate } from '../router.ts';
import { useSession } from '../session.ts';
import { DeliveryLog } from './webhooks-deliveries.tsx';
import { WebhookForm } from './webhooks-form.tsx';
import { connectionName, loadConnections, type Connection, type Webhook } from './webhooks-model.ts';
import { VerificationSnippet } from './webhooks-snippets.tsx';

export function WebhookDetail({ id }: { id: string }) {
  const writes = useSession().may('connections', 'write');
  const webhook = useLoad(() => get<Webhook>(`/v3/webhooks/${encodeURIComponent(id)}`), [id]);
  const connections = useLoad(loadConnections, []);
  const [editing, setEditing] = useState(false);
  const removal = useAction();

  const remove = async () => {
    const done = await removal.run(() => del(`/v3/webhooks/${encodeURIComponent(id)}`));
    if (done) navigate('webhooks');
  };

  return (
    <>
      <PageHeader
        title="Webhook"
        description={webhook.data?.url ?? <a href={href('webhooks')}>All webhooks</a>}
        actions={
          writes &&
          webhook.data && (
            <ConfirmButton confirm="Delete it and its log?" onConfirm={remove} pending={removal.pending}>
              Delete webhook
            </ConfirmButton>
          )
        }
      />
      <p>
        <a href={href('webhooks')}>← All webhooks</a>
      </p>
      <ErrorNote error={removal.error} prefix="The webhook was not deleted." />
      <ErrorNote error={webhook.error} />
      {!webhook.data ? (
        !webhook.error && <Loading rows={4} label="Loading the webhook" />
      ) : (
        <>
          <Card title="Settings" actions={writes && !editing && <Button variant="secondary" onClick={() => setEditing(true)}>Edit</Button>}>
            {editing ? (
              <WebhookForm
                webhook={webhook.data}
                connections={connections.data}
                onCancel={() => setEditing(false)}
                onSaved={() => {
                  setEditing(false);
                  void webhook.reload();
                }}
              />
            ) : (
              <Settings webhook={webhook.data} connections={connections.data} />
            )}
          </Card>
          <SigningSecret webhook={webhook.data} writes={writes} />
          <DeliveryLog webhookId={webhook.data.id} writes={writes} />
          <VerificationSnippet />
        </>
      )}
    </>
  );
}

function Settings({ webhook, connections }: { webhook: Webhook; connections: Connection[] | undefined }) {
  return (
    <dl class="facts">
      <dt>URL</dt>
      <dd class="mono">{webhook.url}</dd>
      <dt>Events</dt>
      <dd>{webhook.events.join(', ') || 'none'}</dd>
      <dt>Connections</dt>
      <dd>{webhook.connections.length ? webhook.connections.map((c) => connectionName(connections, c)).join(', ') : 'none: it receives nothing until one is bound'}</dd>
      <dt>Signed</dt>
      <dd>{webhook.hmacEnabled ? 'Yes (X-Switchboard-Signature-256)' : 'No: deliveries carry no signature'}</dd>
      <dt>Batching</dt>
      <dd>{webhook.messageGroupDelay ? `${webhook.messageGroupDelay} s window${webhook.enableSimulateTyping ? ', shows “typing…”' : ''}` : 'Off'}</dd>
      <dt>Changed</dt>
      <dd>
        <When at={webhook.updatedAt} />
      </dd>
    </dl>
  );
}

/** The key of the signatures: revealed on request; rotating it stops the old one at once. */
function SigningSecret({ webhook, writes }: { webhook: Webhook; writes: boolean }) {
  const [secret, setSecret] = useState<{ value: string; rotated: boolean }>();
  const action = useAction();
  const path = `/v3/webhooks/${encodeURIComponent(webhook.id)}/secret`;
  const reveal = async () => {
    const answer = await action.run(() => get<{ secret: string }>(path));
    if (answer) setSecret({ value: answer.secret, rotated: false });
  };
  const rotate = async () => {
    const answer = await action.run(() => post<{ secret: string }>(`${path}/rotate`));
    if (answer) setSecret({ value: answer.secret, rotated: true });
  };

  return (
    <Card title="Signing secret">
      {!webhook.hmacEnabled && <p class="warning">Signing is off for this webhook: deliveries carry no signature until “Sign each delivery” is on.</p>}
      <p class="hint">Your receiver keeps this secret and checks each delivery's signature with it. Treat it like a password.</p>
      {secret && (
        <>
          {secret.rotated && <Notice>A new secret: the old one stopped verifying now. Copy it into your receiver; it is shown here only once.</Notice>}
          <SecretBox label={secret.rotated ? 'New signing secret' : 'Signing secret'} value={secret.value} />
        </>
      )}
      <ErrorNote error={action.error} />
      {writes && (
        <div class="form-actions">
          {!secret && (
            <Button variant="secondary" onClick={reveal} pending={action.pending}>
              Reveal secret
            </Button>
          )}
          <ConfirmButton confirm="Rotate? The old secret stops at once" onConfirm={rotate} pending={action.pending} variant="secondary">
            Rotate secret
          </ConfirmButton>
        </div>
      )}
    </Card>
  );
}

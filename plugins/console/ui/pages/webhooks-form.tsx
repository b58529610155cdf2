/**
 * The settings of a connection webhook, to create one (POST /v3/webhooks) or change it (PATCH
 * /v3/webhooks/{id}, which replaces the bound connections with the ones ticked here). The
 * service checks every rule again and its messages are shown as they come.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { patch, post } from '../api.ts';
import { Button, Checkbox, ErrorNote, TextField } from '../components.tsx';
import { useAction } from '../data.ts';
import { CONNECTION_EVENTS, type Connection, type Webhook, type WebhookSettings } from './webhooks-model.ts';

const NEW_WEBHOOK: WebhookSettings = { url: '', events: ['messages.upsert'], connections: [], hmacEnabled: true, messageGroupDelay: null, enableSimulateTyping: false };

export function WebhookForm({
  webhook,
  connections,
  onSaved,
  onCancel,
}: {
  /** The webhook to change; a new one when absent. */
  webhook?: Webhook;
  connections: Connection[] | undefined;
  onSaved: (saved: Webhook) => void;
  onCancel?: () => void;
}) {
  const [settings, setSettings] = useState<WebhookSettings>(webhook ?? NEW_WEBHOOK);
  // The batching window is typed as text, so a half-typed number is not lost.
  const [delay, setDelay] = useState(String(webhook?.messageGroupDelay ?? 5));
  const save = useAction();
  const set = (change: Partial<WebhookSettings>) => setSettings((s) => ({ ...s, ...change }));
  const batching = settings.messageGroupDelay !== null;
  // A new webhook starts bound to every connection there is: one bound to none would hear nothing.
  const bound = useRef(Boolean(webhook));
  useEffect(() => {
    if (bound.current || !connections) return;
    bound.current = true;
    set({ connections: connections.map((c) => c.id) });
  }, [connections]);

  const submit = async (e: Event) => {
    e.preventDefault();
    const body: WebhookSettings = { ...settings, messageGroupDelay: batching ? Number(delay) : null };
    const saved = await save.run(() => (webhook ? patch<Webhook>(`/v3/webhooks/${webhook.id}`, body) : post<Webhook>('/v3/webhooks', body)));
    if (saved) onSaved(saved);
  };

  return (
    <form class="stack webhook-form" onSubmit={submit} aria-label={webhook ? 'Webhook settings' : 'New webhook'}>
      <TextField label="URL" type="url" required value={settings.url} placeholder="https://example.com/hooks/switchboard" onValue={(url) => set({ url })} hint="Public http(s) address of your receiver." />
      <fieldset>
        <legend>Events</legend>
        <div class="choices">
          {CONNECTION_EVENTS.map((event) => (
            <Checkbox label={event.name} hint={event.about} checked={settings.events.includes(event.name)} onChecked={(on) => set({ events: toggled(settings.events, event.name, on) })} />
          ))}
        </div>
      </fieldset>
      <ConnectionChoice connections={connections} chosen={settings.connections} onChosen={(ids) => set({ connections: ids })} />
      <fieldset>
        <legend>Delivery</legend>
        <Checkbox
          label="Sign each delivery"
          hint="Adds X-Switchboard-Signature-256 and X-Switchboard-Timestamp; needed for flow.data_exchange."
          checked={settings.hmacEnabled}
          onChecked={(hmacEnabled) => set({ hmacEnabled })}
        />
        <Checkbox label="Batch messages" hint="Collects a contact's messages for a short window and sends them in one delivery." checked={batching} onChecked={(on) => set({ messageGroupDelay: on ? Number(delay) || 5 : null })} />
        {batching && (
          <>
            <TextField label="Batching window (seconds, 1 to 300)" type="number" min={1} max={300} value={delay} onValue={setDelay} />
            <Checkbox label="Show “typing…” to the contact during the window" checked={settings.enableSimulateTyping} onChecked={(enableSimulateTyping) => set({ enableSimulateTyping })} />
          </>
        )}
      </fieldset>
      <ErrorNote error={save.error} prefix={webhook ? 'The webhook was not changed.' : 'The webhook was not created.'} />
      <div class="form-actions">
        <Button type="submit" pending={save.pending}>
          {webhook ? 'Save changes' : 'Create webhook'}
        </Button>
        {onCancel && (
          <Button variant="secondary" onClick={onCancel}>
            Cancel
          </Button>
        )}
      </div>
    </form>
  );
}

/** Every connection, or the ones ticked. "Every" binds those that exist now: a new connection is added here later. */
function ConnectionChoice({ connections, chosen, onChosen }: { connections: Connection[] | undefined; chosen: string[]; onChosen: (ids: string[]) => void }) {
  const all = connections?.map((c) => c.id) ?? [];
  const everyOne = all.length > 0 && all.every((id) => chosen.includes(id));
  // Bound ids no longer listed (a connection this member cannot read) are kept, not dropped silently.
  const unlisted = chosen.filter((id) => !all.includes(id));
  return (
    <fieldset>
      <legend>Connections</legend>
      {!connections ? (
        <p class="muted">Loading connections…</p>
      ) : connections.length === 0 ? (
        <p class="hint">No connections yet: the webhook receives nothing until one is created and bound here.</p>
      ) : (
        <div class="choices">
          <Checkbox label="All connections" hint="The ones that exist now; bind later ones here." checked={everyOne} onChecked={(on) => onChosen(on ? [...unlisted, ...all] : unlisted)} />
          {connections.map((c) => (
            <Checkbox label={c.name} hint={[c.driver, c.phoneNumber].filter(Boolean).join(', ')} checked={chosen.includes(c.id)} onChecked={(on) => onChosen(toggled(chosen, c.id, on))} />
          ))}
        </div>
      )}
      {connections && chosen.length === 0 && connections.length > 0 && <p class="hint">None chosen: the webhook receives nothing.</p>}
    </fieldset>
  );
}

function toggled(list: string[], item: string, on: boolean): string[] {
  return on ? [...list.filter((x) => x !== item), item] : list.filter((x) => x !== item);
}

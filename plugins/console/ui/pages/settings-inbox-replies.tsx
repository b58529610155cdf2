/**
 * The inbox's automatic messages, each a switch and an optional text (empty: the service's
 * default text): the out-of-office reply (`…/{id}/out-of-office`) and the satisfaction survey
 * sent on resolving (`…/{id}/csat`).
 */
import { useEffect, useState } from 'preact/hooks';
import { get, put } from '../api.ts';
import { Button, Checkbox, ErrorNote, Loading, Notice, TextArea } from '../components.tsx';
import { useAction, useLoad } from '../data.ts';
import { itemPath } from './settings-model.ts';

interface AutomaticMessage {
  enabled: boolean;
  message: string | null;
  /** Out-of-office only: without business hours the inbox is never closed. */
  businessHoursEnabled?: boolean;
}

export function AutomaticMessageForm({ inboxId, setting, switchLabel, switchHint, textLabel }: { inboxId: string; setting: 'out-of-office' | 'csat'; switchLabel: string; switchHint: string; textLabel: string }) {
  const path = itemPath('inboxes', inboxId, `/${setting}`);
  const current = useLoad(() => get<AutomaticMessage>(path), [path]);
  const [enabled, setEnabled] = useState(false);
  const [message, setMessage] = useState('');
  const [saved, setSaved] = useState(false);
  const save = useAction();
  useEffect(() => {
    if (!current.data) return;
    setEnabled(current.data.enabled);
    setMessage(current.data.message ?? '');
  }, [current.data]);

  if (!current.data) return current.error ? <ErrorNote error={current.error} /> : <Loading rows={1} />;
  const submit = async (e: Event) => {
    e.preventDefault();
    setSaved(false);
    if (await save.run(() => put<AutomaticMessage>(path, { enabled, message: message.trim() || null }))) {
      setSaved(true);
      await current.reload();
    }
  };
  return (
    <form onSubmit={submit} aria-label={switchLabel}>
      <Checkbox label={switchLabel} hint={switchHint} checked={enabled} onChecked={(on) => (setSaved(false), setEnabled(on))} />
      {current.data.businessHoursEnabled === false && enabled && <p class="warning">This inbox has no business hours, so it is never closed and this reply is never sent.</p>}
      <TextArea label={textLabel} value={message} onValue={setMessage} rows={2} hint="Empty: the service's default text." />
      <div class="form-actions">
        <Button type="submit" pending={save.pending}>
          Save
        </Button>
      </div>
      <ErrorNote error={save.error} prefix="Nothing was changed." />
      {saved && <Notice>Saved.</Notice>}
    </form>
  );
}

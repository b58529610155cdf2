/**
 * Importing a connection inbox's past chats (`POST/GET /v3/helpdesk/inboxes/{id}/sync`): a button,
 * and the latest import's progress, read again every 2 seconds while it runs (the sync's own
 * events are not on the console's socket for every member, and a progress bar needs no more).
 */
import { useEffect } from 'preact/hooks';
import { ApiError, get, post } from '../api.ts';
import { Button, Count, ErrorNote, StatusBadge, When } from '../components.tsx';
import { useAction, useLoad } from '../data.ts';
import { itemPath } from './settings-model.ts';

interface HistorySync {
  status: 'RUNNING' | 'COMPLETED' | 'FAILED';
  contacts: { total: number; processed: number; created: number };
  conversations: { total: number; processed: number; created: number };
  messages: { imported: number };
  startedAt: string;
  finishedAt: string | null;
  error: string | null;
}

export function HistoryImport({ inboxId }: { inboxId: string }) {
  const path = itemPath('inboxes', inboxId, '/sync');
  // 404 is "never imported", not an error.
  const latest = useLoad(() => get<HistorySync>(path).catch((e) => (e instanceof ApiError && e.status === 404 ? null : Promise.reject(e))), [path]);
  const start = useAction();
  const running = latest.data?.status === 'RUNNING';
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(() => void latest.reload(), 2000);
    return () => clearInterval(timer);
  }, [running]);

  const sync = latest.data;
  return (
    <div class="stack">
      <p class="muted">Brings the connection's past one-to-one chats into this inbox: each chat's latest 100 messages. A chat whose contact wrote last within 24 hours opens as a conversation to answer; older ones arrive resolved. Running it again imports only what is missing.</p>
      <ErrorNote error={latest.error} />
      {sync === null && <p>Never imported.</p>}
      {sync && (
        <p aria-live="polite">
          <StatusBadge status={sync.status} /> Started <When at={sync.startedAt} />: <Count value={sync.conversations.processed} /> of <Count value={sync.conversations.total} /> chats,{' '}
          <Count value={sync.conversations.created} /> new conversations, <Count value={sync.messages.imported} /> messages.
          {sync.error && <span class="settings-error-text"> {sync.error}</span>}
        </p>
      )}
      <div class="form-actions">
        <Button
          variant="secondary"
          pending={start.pending}
          disabled={running}
          onClick={async () => {
            if (await start.run(() => post(path))) await latest.reload();
          }}
        >
          {running ? 'Importing…' : 'Import past chats'}
        </Button>
      </div>
      <ErrorNote error={start.error} prefix="The import did not start." />
    </div>
  );
}

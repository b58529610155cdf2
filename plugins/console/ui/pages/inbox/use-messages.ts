/**
 * The messages of a conversation as the pane holds them: the newest page read on open, older
 * pages on demand (`cursor` = the oldest held), and the live events folded in, each message
 * once, oldest first.
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { get } from '../../api.ts';
import type { HelpdeskMessage } from './conversation-model.ts';

/** Messages read per call. */
const PAGE = 50;

export interface Messages {
  list: HelpdeskMessage[] | undefined;
  error: Error | undefined;
  hasOlder: boolean;
  olderPending: boolean;
  older(): Promise<void>;
  /** Reads the newest page again and merges it (after a reconnect, after an action). */
  reload(): Promise<void>;
  add(message: HelpdeskMessage): void;
  change(messageId: string, change: Partial<HelpdeskMessage>): void;
  remove(messageId: string): void;
}

export function useMessages(base: string): Messages {
  const [list, setList] = useState<HelpdeskMessage[] | undefined>();
  const [error, setError] = useState<Error | undefined>();
  const [hasOlder, setHasOlder] = useState(false);
  const [olderPending, setOlderPending] = useState(false);
  const held = useRef<HelpdeskMessage[] | undefined>();
  held.current = list;

  const reload = useCallback(async () => {
    try {
      const page = await get<HelpdeskMessage[]>(`${base}/messages`, { limit: PAGE });
      setError(undefined);
      setList((now) => {
        if (!now) setHasOlder(page.length === PAGE);
        return merged(now ?? [], page);
      });
    } catch (failure) {
      setError(failure as Error);
    }
  }, [base]);

  useEffect(() => {
    setList(undefined);
    void reload();
  }, [base]);

  return {
    list,
    error,
    hasOlder,
    olderPending,
    reload,
    async older() {
      const oldest = held.current?.[0];
      if (!oldest) return;
      setOlderPending(true);
      try {
        const page = await get<HelpdeskMessage[]>(`${base}/messages`, { limit: PAGE, cursor: oldest.id });
        setHasOlder(page.length === PAGE);
        setList((now) => merged(now ?? [], page));
      } catch (failure) {
        setError(failure as Error);
      } finally {
        setOlderPending(false);
      }
    },
    add: (message) => setList((now) => merged(now ?? [], [message])),
    change: (messageId, change) => setList((now) => now?.map((m) => (m.id === messageId ? { ...m, ...change, status: laterStatus(m.status, change.status) } : m))),
    remove: (messageId) => setList((now) => now?.filter((m) => m.id !== messageId)),
  };
}

/** Every message once, the fresher copy kept (a later status), in the order they were written. */
function merged(held: HelpdeskMessage[], incoming: HelpdeskMessage[]): HelpdeskMessage[] {
  const byId = new Map(held.map((m) => [m.id, m]));
  for (const m of incoming) {
    const known = byId.get(m.id);
    byId.set(m.id, known ? { ...m, status: laterStatus(known.status, m.status) } : m);
  }
  return [...byId.values()].sort((a, b) => a.createdAt.localeCompare(b.createdAt) || 0);
}

const ORDER = ['PENDING', 'SENT', 'DELIVERED', 'READ'];

/** Statuses only move forward (FAILED and READ are final): an old page never takes one back. */
function laterStatus(held: HelpdeskMessage['status'], incoming: HelpdeskMessage['status'] | undefined): HelpdeskMessage['status'] {
  if (!incoming) return held ?? incoming ?? null;
  if (!held) return incoming;
  if (held === 'FAILED' || held === 'READ' || incoming === 'FAILED') return held === 'READ' || held === 'FAILED' ? held : incoming;
  return ORDER.indexOf(incoming) < ORDER.indexOf(held) ? held : incoming;
}

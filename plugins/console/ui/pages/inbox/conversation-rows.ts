/**
 * The rows of the list: the first page for the filters, "Load more" pages after it (keyset
 * cursor), and a re-read that keeps every row already shown in place while it loads, so a live
 * update never makes the list jump or lose what was loaded further down.
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { get } from '../../api.ts';
import { listQuery, type ConversationPage, type ListedConversation, type ListState } from './inbox-model.ts';

const PAGE = 25;
const MOST = 100;

export interface ConversationRows {
  rows: ListedConversation[] | undefined;
  nextCursor: string | null;
  error: Error | undefined;
  loading: boolean;
  loadingMore: boolean;
  /** Reads again as many rows as are shown (at least a page, at most 100). */
  refresh(): Promise<void>;
  loadMore(): Promise<void>;
}

export function useConversationRows(state: ListState): ConversationRows {
  const [rows, setRows] = useState<ListedConversation[] | undefined>();
  const [nextCursor, setNextCursor] = useState<string | null>(null);
  const [error, setError] = useState<Error | undefined>();
  const [loading, setLoading] = useState(true);
  const [loadingMore, setLoadingMore] = useState(false);
  const shown = useRef(0);
  const generation = useRef(0);
  const filters = JSON.stringify(state);
  const latest = useRef(state);
  latest.current = state;

  const read = useCallback(async (limit: number) => {
    const mine = ++generation.current;
    setLoading(true);
    try {
      const page = await get<ConversationPage>('/v3/helpdesk/conversations', listQuery(latest.current, limit));
      if (mine !== generation.current) return;
      shown.current = page.data.length;
      setRows(page.data);
      setNextCursor(page.nextCursor);
      setError(undefined);
    } catch (failure) {
      if (mine === generation.current) setError(failure as Error);
    } finally {
      if (mine === generation.current) setLoading(false);
    }
  }, []);

  useEffect(() => {
    void read(PAGE);
  }, [filters]);

  const refresh = useCallback(() => read(Math.min(MOST, Math.max(PAGE, shown.current))), [read]);

  const loadMore = useCallback(async () => {
    if (!nextCursor) return;
    const mine = generation.current;
    setLoadingMore(true);
    try {
      const page = await get<ConversationPage>('/v3/helpdesk/conversations', listQuery(latest.current, PAGE, nextCursor));
      if (mine !== generation.current) return;
      setRows((now) => {
        const known = new Set((now ?? []).map((r) => r.id));
        const next = [...(now ?? []), ...page.data.filter((r) => !known.has(r.id))];
        shown.current = next.length;
        return next;
      });
      setNextCursor(page.nextCursor);
    } catch (failure) {
      setError(failure as Error);
    } finally {
      setLoadingMore(false);
    }
  }, [nextCursor]);

  return { rows, nextCursor, error, loading, loadingMore, refresh, loadMore };
}

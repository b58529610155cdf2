/**
 * Loading and writing from a page: the answer, its error and a reload, refreshed on a timer
 * while the tab is visible when a page asks for it (connection status, a QR code, message
 * statuses and campaign progress move without a reload). Old data stays on screen while new
 * data loads, so nothing jumps.
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export interface Loaded<T> {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean;
  reload(): Promise<void>;
}

export function useLoad<T>(load: () => Promise<T>, deps: unknown[], options: { every?: number } = {}): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: Error; loading: boolean }>({ loading: true });
  const latest = useRef(load);
  latest.current = load;
  const generation = useRef(0);

  const reload = useCallback(async () => {
    const mine = ++generation.current;
    setState((s) => ({ ...s, loading: true }));
    try {
      const data = await latest.current();
      if (mine === generation.current) setState({ data, loading: false });
    } catch (error) {
      if (mine === generation.current) setState((s) => ({ data: s.data, error: error as Error, loading: false }));
    }
  }, []);

  useEffect(() => {
    setState({ loading: true });
    void reload();
    if (!options.every) return;
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') void reload();
    }, options.every);
    return () => clearInterval(timer);
  }, deps);

  return { data: state.data, error: state.error, loading: state.loading, reload };
}

export interface Action {
  pending: boolean;
  error: Error | undefined;
  /** Runs the write; answers its result, or undefined when it failed (the error is kept to show). */
  run<R>(write: () => Promise<R>): Promise<R | undefined>;
  clear(): void;
}

export function useAction(): Action {
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<Error | undefined>();
  const run = useCallback(async <R,>(write: () => Promise<R>) => {
    setPending(true);
    setError(undefined);
    try {
      return await write();
    } catch (failure) {
      setError(failure as Error);
      return undefined;
    } finally {
      setPending(false);
    }
  }, []);
  return { pending, error, run, clear: () => setError(undefined) };
}

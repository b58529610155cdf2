/**
 * The console's websocket: the service's own `/helpdesk` namespace (spec 6.7) opened with the
 * sign-in session cookie, in the workspace the member chose (`auth.accountId`; a page cannot set
 * headers on a websocket). Pages listen to its events; the top bar shows whether it is up.
 */
import { createContext } from 'preact';
import { useContext, useEffect, useState } from 'preact/hooks';
import { io, type Socket } from 'socket.io-client';

export type LiveState = 'connecting' | 'online' | 'offline';

export interface Live {
  state: LiveState;
  /** Why it is offline, as the service said (`unauthorized`, a disabled helpdesk…). */
  reason?: string;
  /** Presence of the workspace's members (`presence.update`), by user id. */
  presence: Record<string, string>;
  /** Listens to an event while the caller is mounted: `useEffect(() => live.on('x', f), [])`. */
  on(event: string, listener: (payload: any) => void): () => void;
  socket: Socket | undefined;
}

export const LiveContext = createContext<Live>({ state: 'offline', presence: {}, on: () => () => undefined, socket: undefined });

export function useLive(): Live {
  return useContext(LiveContext);
}

export function useLiveSocket(workspaceId: string): Live {
  const [socket, setSocket] = useState<Socket | undefined>();
  const [state, setState] = useState<LiveState>('connecting');
  const [reason, setReason] = useState<string | undefined>();
  const [presence, setPresence] = useState<Record<string, string>>({});

  useEffect(() => {
    const opened = io('/helpdesk', { path: '/ws', transports: ['websocket'], auth: { accountId: workspaceId }, reconnectionDelayMax: 10_000 });
    setSocket(opened);
    setState('connecting');
    opened.on('connect', () => {
      setState('online');
      setReason(undefined);
      opened.emit('presence:online');
    });
    opened.on('disconnect', (why) => {
      setState('offline');
      setReason(why);
    });
    opened.on('connect_error', (error) => {
      setState('offline');
      setReason(error.message);
    });
    opened.on('presence.update', (update: { users?: Record<string, string> }) => setPresence((now) => ({ ...now, ...(update.users ?? {}) })));
    const heartbeat = setInterval(() => opened.connected && opened.emit('presence:online'), 20_000);
    return () => {
      clearInterval(heartbeat);
      opened.close();
    };
  }, [workspaceId]);

  return {
    state,
    reason,
    presence,
    socket,
    on(event, listener) {
      socket?.on(event, listener);
      return () => socket?.off(event, listener);
    },
  };
}

/**
 * One conversation's live side (spec 6.7): the pane subscribes to its room while open, hears its
 * messages and changes, who else is typing in it, and tells colleagues when this member types
 * (throttled) and how far they read.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { useLive } from '../../live.ts';
import type { HelpdeskMessage } from './conversation-model.ts';

export interface ConversationListener {
  messageCreated(message: HelpdeskMessage): void;
  messageChanged(messageId: string, change: Partial<HelpdeskMessage>): void;
  messageDeleted(messageId: string): void;
  /** The conversation itself changed (status, assignee, labels…): read it again. */
  conversationChanged(event: { type: string }): void;
  /** The socket (re)connected: whatever happened meanwhile was missed, read everything again. */
  reconnected(): void;
}

/** A colleague who stopped typing without saying so is forgotten after this long. */
const TYPING_FORGET_MS = 6000;
/** `typing:start` is sent again at most this often while typing goes on. */
const TYPING_REPEAT_MS = 3000;
/** Quiet this long after the last key and `typing:stop` is sent. */
const TYPING_IDLE_MS = 4000;

const CONVERSATION_EVENTS = [
  'helpdesk.conversation.updated',
  'helpdesk.conversation.status_changed',
  'helpdesk.conversation.assignee_changed',
  'helpdesk.conversation.priority_changed',
  'helpdesk.conversation.labels_changed',
  'helpdesk.conversation.ai_agent_changed',
  'helpdesk.conversation.deleted',
];

/** Subscribes while mounted; answers the ids of the colleagues typing now. */
export function useConversationLive(conversationId: string, listener: ConversationListener): string[] {
  const { socket } = useLive();
  const latest = useRef(listener);
  latest.current = listener;
  const [typing, setTyping] = useState<Record<string, number>>({});

  useEffect(() => {
    if (!socket) return;
    const mine = (payload: { conversationId?: string } | undefined) => payload?.conversationId === conversationId;
    const subscribe = () => socket.emit('subscribe:conversation', { conversationId });
    const handlers: Record<string, (payload: any) => void> = {
      connect: () => {
        subscribe();
        latest.current.reconnected();
      },
      'helpdesk.message.created': (p) => mine(p) && p.message && latest.current.messageCreated(p.message),
      'helpdesk.message.updated': (p) => mine(p) && p.message && latest.current.messageChanged(p.messageId, p.message),
      'helpdesk.message.status_changed': (p) => mine(p) && latest.current.messageChanged(p.messageId, { status: p.toStatus, externalError: p.externalError ?? null }),
      'helpdesk.message.deleted': (p) => mine(p) && latest.current.messageDeleted(p.messageId),
      'typing:start': (p) => mine(p) && setTyping((now) => ({ ...now, [p.userId]: Date.now() + TYPING_FORGET_MS })),
      'typing:stop': (p) => mine(p) && setTyping(({ [p.userId]: _, ...rest }) => rest),
    };
    for (const type of CONVERSATION_EVENTS) handlers[type] = (p) => mine(p) && latest.current.conversationChanged(p);
    // The member's inboxes changed: this conversation may be out of their reach now (read: 404).
    handlers['access.update'] = () => latest.current.conversationChanged({ type: 'access.update' });
    for (const [event, handler] of Object.entries(handlers)) socket.on(event, handler);
    if (socket.connected) subscribe();
    return () => {
      for (const [event, handler] of Object.entries(handlers)) socket.off(event, handler);
      if (socket.connected) socket.emit('unsubscribe:conversation', { conversationId });
    };
  }, [socket, conversationId]);

  // Forget typists whose last word is too old (a closed tab sends no typing:stop).
  const typists = Object.keys(typing);
  useEffect(() => {
    if (typists.length === 0) return;
    const timer = setInterval(() => setTyping((now) => Object.fromEntries(Object.entries(now).filter(([, until]) => until > Date.now()))), 1000);
    return () => clearInterval(timer);
  }, [typists.length > 0]);
  return typists;
}

/** What the composer calls on every key (`typing()`) and when done (`stopped()`). */
export function useTypingSignal(conversationId: string): { typing(): void; stopped(): void } {
  const { socket } = useLive();
  const lastStart = useRef(0);
  const idle = useRef<ReturnType<typeof setTimeout>>();
  const stopped = () => {
    clearTimeout(idle.current);
    if (lastStart.current === 0) return;
    lastStart.current = 0;
    socket?.emit('typing:stop', { conversationId });
  };
  useEffect(() => stopped, [socket, conversationId]);
  return {
    typing() {
      if (!socket?.connected) return;
      if (Date.now() - lastStart.current > TYPING_REPEAT_MS) {
        lastStart.current = Date.now();
        socket.emit('typing:start', { conversationId });
      }
      clearTimeout(idle.current);
      idle.current = setTimeout(stopped, TYPING_IDLE_MS);
    },
    stopped,
  };
}

/** Tells colleagues this member read up to a message (`read:up_to`). */
export function useReadSignal(conversationId: string): (messageId: string) => void {
  const { socket } = useLive();
  return (messageId) => socket?.connected && socket.emit('read:up_to', { conversationId, messageId });
}

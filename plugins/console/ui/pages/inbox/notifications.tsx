/**
 * The member's notifications (mentions, assignments, messages on conversations assigned to
 * them): a bell with the unread count, live from `helpdesk.notification.created`, and a list in
 * a dialog where opening one marks it read and opens its conversation.
 */
import { useEffect, useState } from 'preact/hooks';
import { get, itemsOf, post } from '../../api.ts';
import { Button, Dialog, EmptyState, ErrorNote, Loading, When } from '../../components.tsx';
import { useAction, useLoad } from '../../data.ts';
import { useLive } from '../../live.ts';

interface Notification {
  id: string;
  notificationType: 'mention' | 'assigned' | 'new_message_in_assigned';
  secondaryActorType: 'user' | 'contact' | null;
  secondaryActorId: string | null;
  conversationId: string;
  readAt: string | null;
  createdAt: string;
}

type Namer = { memberName: (userId: string) => string | undefined; conversationName: (conversationId: string) => string | undefined };

export function NotificationBell({ memberName, conversationName, onOpen }: Namer & { onOpen: (conversationId: string) => void }) {
  const live = useLive();
  const [open, setOpen] = useState(false);
  const unread = useLoad(() => get<{ count: number }>('/v3/helpdesk/notifications/unread-count'), [], { every: 60_000 });
  useEffect(() => live.on('helpdesk.notification.created', () => void unread.reload()), [live.socket]);
  const count = unread.data?.count ?? 0;
  return (
    <>
      <button type="button" class="btn secondary bell" aria-haspopup="dialog" onClick={() => setOpen(true)} aria-label={`Notifications, ${count} unread`}>
        <BellIcon />
        {count > 0 && (
          <span class="bell-count" aria-hidden="true">
            {count > 99 ? '99+' : count}
          </span>
        )}
      </button>
      <Dialog title="Notifications" open={open} onClose={() => setOpen(false)}>
        <NotificationList
          memberName={memberName}
          conversationName={conversationName}
          onChanged={() => void unread.reload()}
          onOpen={(conversationId) => {
            setOpen(false);
            onOpen(conversationId);
          }}
        />
      </Dialog>
    </>
  );
}

function NotificationList({ memberName, conversationName, onChanged, onOpen }: Namer & { onChanged: () => void; onOpen: (conversationId: string) => void }) {
  const list = useLoad(async () => itemsOf<Notification>(await get('/v3/helpdesk/notifications', { per_page: 30 })), []);
  const write = useAction();
  const live = useLive();
  useEffect(() => live.on('helpdesk.notification.created', () => void list.reload()), [live.socket]);
  const anyUnread = list.data?.some((n) => !n.readAt);
  return (
    <div class="notifications">
      <ErrorNote error={list.error ?? write.error} />
      {anyUnread && (
        <p>
          <Button
            variant="secondary"
            pending={write.pending}
            onClick={async () => {
              if ((await write.run(() => post('/v3/helpdesk/notifications/read-all'))) !== undefined) {
                onChanged();
                await list.reload();
              }
            }}
          >
            Mark all read
          </Button>
        </p>
      )}
      {!list.data ? (
        <Loading rows={3} label="Loading notifications" />
      ) : list.data.length === 0 ? (
        <EmptyState title="No notifications">Mentions in notes and conversations assigned to you show up here.</EmptyState>
      ) : (
        <ul class="notification-list">
          {list.data.map((n) => (
            <li class={n.readAt ? '' : 'unread'}>
              <button
                type="button"
                class="notification"
                onClick={async () => {
                  if (!n.readAt) await write.run(() => post(`/v3/helpdesk/notifications/${n.id}/read`));
                  onChanged();
                  onOpen(n.conversationId);
                }}
              >
                <span>
                  {!n.readAt && <span class="sr-only">Unread: </span>}
                  {describe(n, memberName)}
                  {conversationName(n.conversationId) && <span class="muted"> · {conversationName(n.conversationId)}</span>}
                </span>
                <small class="muted">
                  <When at={n.createdAt} />
                </small>
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function describe(n: Notification, memberName: (userId: string) => string | undefined): string {
  const who = n.secondaryActorType === 'user' && n.secondaryActorId ? (memberName(n.secondaryActorId) ?? 'A colleague') : 'Someone';
  switch (n.notificationType) {
    case 'mention':
      return `${who} mentioned you in a note`;
    case 'assigned':
      return n.secondaryActorType === 'user' ? `${who} assigned you a conversation` : 'A conversation was assigned to you';
    case 'new_message_in_assigned':
      return 'New message in a conversation assigned to you';
  }
}

/** Drawn inline: the console loads no icon font, and not every system has a colour emoji font. */
function BellIcon() {
  return (
    <svg aria-hidden="true" width="18" height="18" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round">
      <path d="M6 8a6 6 0 0 1 12 0c0 7 3 9 3 9H3s3-2 3-9" />
      <path d="M10.3 21a1.94 1.94 0 0 0 3.4 0" />
    </svg>
  );
}

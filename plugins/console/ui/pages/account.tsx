/**
 * Your account: who you are, your workspaces and roles, your sign-in sessions (each with its
 * browser and last use; end one, or all but this one) and how to change your password.
 */
import { del, get, itemsOf, post } from '../api.ts';
import { Button, Card, ConfirmButton, ErrorNote, Loading, Notice, PageHeader, SecretBox, Table, When } from '../components.tsx';
import { useAction, useLoad } from '../data.ts';
import type { Route } from '../router.ts';
import { useSession } from '../session.ts';
import { useState } from 'preact/hooks';

interface SessionRow {
  id: string;
  createdAt: string;
  lastSeenAt: string;
  expiresAt: string;
  absoluteExpiresAt: string;
  userAgent: string | null;
  current: boolean;
}

export function AccountPage(_: { route: Route }) {
  const session = useSession();
  return (
    <>
      <PageHeader title="Your account" description="Your sign-in, your workspaces and the browsers you are signed in on." />
      <Card title="You">
        <p>
          <strong>{session.user.name || session.user.email}</strong> <span class="muted">{session.user.email}</span>
        </p>
        <Table caption="Your workspaces" head={['Workspace', 'Your roles']}>
          {session.workspaces.map((w) => (
            <tr>
              <td>{w.name}</td>
              <td>{w.roles.join(', ').toLowerCase()}</td>
            </tr>
          ))}
        </Table>
      </Card>
      <Sessions />
      <PasswordChange />
    </>
  );
}

function Sessions() {
  const sessions = useLoad(async () => itemsOf<SessionRow>(await get('/v3/sessions')), []);
  const action = useAction();
  const others = (sessions.data ?? []).filter((s) => !s.current).length;

  const end = async (id: string, current: boolean) => {
    const ended = await action.run(async () => {
      await del(`/v3/sessions/${id}`);
      return true;
    });
    if (!ended) return;
    if (current) location.assign('/signin');
    else await sessions.reload();
  };

  const endOthers = async () => {
    const ended = await action.run(async () => {
      await del('/v3/sessions');
      return true;
    });
    if (ended) await sessions.reload();
  };

  return (
    <Card
      title="Where you are signed in"
      actions={
        others > 0 && (
          <ConfirmButton confirm="Sign out the others?" pending={action.pending} onConfirm={endOthers}>
            Sign out other sessions
          </ConfirmButton>
        )
      }
    >
      <p class="muted">A session ends after 24 hours without use and 14 days after sign-in at the latest; changing your password ends all of them.</p>
      <ErrorNote error={sessions.error ?? action.error} />
      {!sessions.data ? (
        <Loading rows={2} />
      ) : (
        <Table caption="Your sign-in sessions" head={['Browser', 'Signed in', 'Last used', 'Ends', '']}>
          {sessions.data.map((s) => (
            <tr>
              <td>
                {browserName(s.userAgent)} {s.current && <span class="badge good">this browser</span>}
              </td>
              <td><When at={s.createdAt} /></td>
              <td><When at={s.lastSeenAt} /></td>
              <td><When at={s.expiresAt < s.absoluteExpiresAt ? s.expiresAt : s.absoluteExpiresAt} /></td>
              <td>
                <ConfirmButton confirm={s.current ? 'Sign out here?' : 'End it?'} onConfirm={() => end(s.id, s.current)}>
                  {s.current ? 'Sign out' : 'End'}
                </ConfirmButton>
              </td>
            </tr>
          ))}
        </Table>
      )}
    </Card>
  );
}

/** Members who may issue reset links get one for themselves; everyone else uses the mailed link. */
function PasswordChange() {
  const session = useSession();
  const action = useAction();
  const [link, setLink] = useState<{ url: string; expiresAt: string } | undefined>();
  return (
    <Card title="Password">
      {session.may('members', 'write') ? (
        <>
          <p>Get a one-time link to a page where you choose a new password. It works for one hour.</p>
          <ErrorNote error={action.error} />
          {link ? (
            <>
              <Notice>
                Open the link below to choose a new password (valid until <When at={link.expiresAt} />). Your sessions end when you change it.
              </Notice>
              <SecretBox label="Password change link" value={link.url} />
              <p><a href={link.url}>Change my password now</a></p>
            </>
          ) : (
            <Button variant="secondary" pending={action.pending} onClick={async () => setLink(await action.run(() => post<{ url: string; expiresAt: string }>(`/v3/members/${session.user.userId}/password-reset`)))}>
              Get a password change link
            </Button>
          )}
        </>
      ) : (
        <p>
          To change your password, use <a href="/forgot-password">Forgot password</a> (a link is mailed to you), or ask an Owner or Admin of your workspace for a reset link.
        </p>
      )}
    </Card>
  );
}

function browserName(userAgent: string | null): string {
  if (!userAgent) return 'Unknown browser';
  const match = userAgent.match(/(Firefox|Edg|Chrome|Safari|curl|HeadlessChrome)\/[\d.]+/);
  const os = userAgent.match(/\((Windows|Macintosh|Linux|Android|iPhone|iPad)[^)]*\)/)?.[1];
  const name = match ? match[0].split('/')[0]!.replace('Edg', 'Edge') : userAgent.slice(0, 40);
  return os ? `${name} on ${os === 'Macintosh' ? 'macOS' : os}` : name;
}

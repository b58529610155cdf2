/**
 * OAuth apps: the apps this workspace built (register, edit, delete; a confidential app's secret
 * is shown once, when it is created) and the apps that hold access to the workspace through a
 * member's consent, each of which can be cut off at once.
 */
import { useState } from 'preact/hooks';
import { del, get, itemsOf } from '../api.ts';
import { Button, Card, ConfirmButton, Dialog, EmptyState, ErrorNote, Loading, Notice, PageHeader, SecretBox, Table, When } from '../components.tsx';
import { useAction, useLoad } from '../data.ts';
import type { Route } from '../router.ts';
import { useSession } from '../session.ts';
import { AppForm, type OAuthApp } from './oauth-app-form.tsx';

interface Consent {
  id: string;
  clientId: string;
  clientName: string;
  verified: boolean;
  userEmail: string;
  scopes: string[];
  createdAt: string;
  updatedAt: string;
}

export function OAuthPage(_: { route: Route }) {
  const session = useSession();
  const writes = session.may('tokens', 'write');
  const apps = useLoad(() => get<OAuthApp[]>('/v3/oauth/clients'), []);
  const consents = useLoad(async () => itemsOf<Consent>(await get('/v3/oauth/consents', { per_page: 100 })), []);
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<OAuthApp | undefined>();
  const [created, setCreated] = useState<OAuthApp | undefined>();

  return (
    <>
      <PageHeader
        title="OAuth apps"
        description="Apps that act in this workspace for a member who approves them, and the apps that hold such an approval now."
        actions={writes && <Button onClick={() => setCreating(true)}>New app</Button>}
      />
      {created && <CreatedApp app={created} onDone={() => setCreated(undefined)} />}
      <Card title="Your apps">
        <ErrorNote error={apps.error} />
        {!apps.data ? (
          <Loading />
        ) : apps.data.length === 0 ? (
          <EmptyState title="No OAuth apps yet">Register an app to let it ask members for access to this workspace through the authorization page.</EmptyState>
        ) : (
          <AppTable apps={apps.data} writes={writes} onEdit={setEditing} onDeleted={apps.reload} />
        )}
      </Card>
      <Card title="Apps with access">
        <ErrorNote error={consents.error} />
        {!consents.data ? (
          <Loading />
        ) : consents.data.length === 0 ? (
          <EmptyState title="No app holds access">When a member approves an app on the authorization page, it shows here until the access is revoked.</EmptyState>
        ) : (
          <ConsentTable consents={consents.data} writes={writes} onRevoked={consents.reload} />
        )}
      </Card>
      <Dialog title="New OAuth app" open={creating} onClose={() => setCreating(false)}>
        <AppForm
          onSaved={(app) => {
            setCreating(false);
            setCreated(app);
            void apps.reload();
          }}
          onCancel={() => setCreating(false)}
        />
      </Dialog>
      <Dialog title={`Edit ${editing?.client_name ?? 'app'}`} open={Boolean(editing)} onClose={() => setEditing(undefined)}>
        {editing && (
          <AppForm
            app={editing}
            onSaved={() => {
              setEditing(undefined);
              void apps.reload();
            }}
            onCancel={() => setEditing(undefined)}
          />
        )}
      </Dialog>
    </>
  );
}

/** The answer of a create: the client id and, for a confidential app, its secret (never shown again). */
function CreatedApp({ app, onDone }: { app: OAuthApp; onDone: () => void }) {
  return (
    <Card title={`App “${app.client_name ?? app.client_id}” created`}>
      <SecretBox label="Client ID" value={app.client_id} />
      {app.client_secret ? (
        <>
          <SecretBox label="Client secret" value={app.client_secret} />
          <p class="warning">Copy the client secret now: it is shown this once and cannot be read again.</p>
        </>
      ) : (
        <Notice>A public app has no secret: it proves itself with PKCE.</Notice>
      )}
      <div class="form-actions">
        <Button variant="secondary" onClick={onDone}>
          Done
        </Button>
      </div>
    </Card>
  );
}

function AppTable({ apps, writes, onEdit, onDeleted }: { apps: OAuthApp[]; writes: boolean; onEdit: (app: OAuthApp) => void; onDeleted: () => void }) {
  return (
    <Table caption="OAuth apps of this workspace" head={['App', 'Client ID', 'Redirect URIs', 'Scopes', 'Created', ...(writes ? [''] : [])]}>
      {apps.map((app) => (
        <tr>
          <td>
            <strong>{app.client_name ?? 'Unnamed app'}</strong>
            <br />
            <span class="muted">
              {app.token_endpoint_auth_method === 'none' ? 'public' : 'confidential'}
              {app.verified ? ' · verified' : ''}
              {app.expire_access_tokens ? '' : ' · tokens never expire'}
            </span>
          </td>
          <td class="mono">{app.client_id}</td>
          <td>
            {app.redirect_uris.map((uri) => (
              <div class="mono">{uri}</div>
            ))}
          </td>
          <td>
            <ScopeList scopes={app.scope.split(' ').filter(Boolean)} required={app.required_scopes} />
          </td>
          <td>
            <When at={new Date(Number(app.client_id_issued_at) * 1000).toISOString()} />
          </td>
          {writes && (
            <td>
              <div class="actions">
                <Button variant="secondary" onClick={() => onEdit(app)} aria-label={`Edit ${app.client_name ?? app.client_id}`}>
                  Edit
                </Button>
                <DeleteApp app={app} onDeleted={onDeleted} />
              </div>
            </td>
          )}
        </tr>
      ))}
    </Table>
  );
}

function DeleteApp({ app, onDeleted }: { app: OAuthApp; onDeleted: () => void }) {
  const action = useAction();
  return (
    <>
      <ConfirmButton confirm="Delete with all its access?" pending={action.pending} onConfirm={() => void action.run(() => del(`/v3/oauth/clients/${encodeURIComponent(app.client_id)}`)).then((r) => r && onDeleted())}>
        Delete
      </ConfirmButton>
      <ErrorNote error={action.error} />
    </>
  );
}

function ConsentTable({ consents, writes, onRevoked }: { consents: Consent[]; writes: boolean; onRevoked: () => void }) {
  return (
    <Table caption="Apps with access to this workspace" head={['App', 'Approved by', 'Scopes', 'Approved', 'Last changed', ...(writes ? [''] : [])]}>
      {consents.map((consent) => (
        <tr>
          <td>
            <strong>{consent.clientName}</strong>
            {consent.verified && <span class="muted"> · verified</span>}
          </td>
          <td>{consent.userEmail}</td>
          <td>
            <ScopeList scopes={consent.scopes} />
          </td>
          <td>
            <When at={consent.createdAt} />
          </td>
          <td>
            <When at={consent.updatedAt} />
          </td>
          {writes && (
            <td>
              <RevokeConsent consent={consent} onRevoked={onRevoked} />
            </td>
          )}
        </tr>
      ))}
    </Table>
  );
}

function RevokeConsent({ consent, onRevoked }: { consent: Consent; onRevoked: () => void }) {
  const action = useAction();
  return (
    <>
      <ConfirmButton confirm="Revoke now?" pending={action.pending} onConfirm={() => void action.run(() => del(`/v3/oauth/consents/${consent.id}`)).then((r) => r && onRevoked())}>
        Revoke
      </ConfirmButton>
      <ErrorNote error={action.error} />
    </>
  );
}

function ScopeList({ scopes, required = [] }: { scopes: string[]; required?: string[] }) {
  if (scopes.length === 0) return <span class="muted">—</span>;
  return (
    <ul class="scope-list">
      {scopes.map((scope) => (
        <li class="mono">
          {scope}
          {required.includes(scope) && <span class="muted"> (required)</span>}
        </li>
      ))}
    </ul>
  );
}

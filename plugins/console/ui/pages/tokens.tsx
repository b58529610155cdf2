/**
 * API tokens (`#/tokens`, Owners and Admins): the workspace's tokens (never their secrets), a
 * form to create one whose secret is shown once, and rename, rotate and revoke. A token acts as
 * the member who made it, with their roles; the list holds every member's tokens of the workspace.
 */
import { useState } from 'preact/hooks';
import { del, get, itemsOf, patch, post } from '../api.ts';
import { Button, Card, ConfirmButton, Dialog, EmptyState, ErrorNote, Loading, PageHeader, SecretBox, Table, TextField, When } from '../components.tsx';
import { useAction, useLoad } from '../data.ts';
import type { Route } from '../router.ts';
import { useSession } from '../session.ts';

interface ApiToken {
  id: string;
  name: string;
  /** Always `sk_live`. */
  prefix: string;
  tokenLast4: string;
  createdAt: string;
  lastUsedAt: string | null;
  /** The full secret: only in the answers of creation and rotation. */
  token?: string;
}

/** A secret just issued: shown until the page is left, never again. */
interface Issued {
  name: string;
  token: string;
  rotated: boolean;
}

export function TokensPage(_: { route: Route }) {
  const writes = useSession().may('tokens', 'write');
  const tokens = useLoad(async () => itemsOf<ApiToken>(await get('/v3/api-tokens', { per_page: 100 })), []);
  const [issued, setIssued] = useState<Issued>();
  const [renaming, setRenaming] = useState<ApiToken>();
  const issue = (token: ApiToken, rotated: boolean) => {
    setIssued({ name: token.name, token: token.token!, rotated });
    void tokens.reload();
  };

  return (
    <>
      <PageHeader title="API tokens" description="Keys for programs that call the API (in the apikey header). Each acts as the member who created it, with that member's roles here." />
      {issued && <IssuedSecret issued={issued} onDone={() => setIssued(undefined)} />}
      {writes && <CreateToken onCreated={(t) => issue(t, false)} />}
      <Card title="Tokens">
        <ErrorNote error={tokens.error} />
        {!tokens.data ? (
          !tokens.error && <Loading />
        ) : tokens.data.length === 0 ? (
          <EmptyState title="No API tokens yet">Create one above for each program that calls the API, so each can be revoked on its own.</EmptyState>
        ) : (
          <Table caption="API tokens" head={writes ? ['Name', 'Token', 'Created', 'Last used', 'Actions'] : ['Name', 'Token', 'Created', 'Last used']}>
            {tokens.data.map((t) => (
              <TokenRow token={t} writes={writes} onRename={() => setRenaming(t)} onRotated={(r) => issue(r, true)} onRevoked={tokens.reload} />
            ))}
          </Table>
        )}
        <p class="hint">Tokens do not expire: revoke one when the program that holds it no longer needs it.</p>
      </Card>
      <Dialog title="Rename token" open={Boolean(renaming)} onClose={() => setRenaming(undefined)}>
        {renaming && (
          <RenameToken
            token={renaming}
            onRenamed={() => {
              setRenaming(undefined);
              void tokens.reload();
            }}
          />
        )}
      </Dialog>
    </>
  );
}

function CreateToken({ onCreated }: { onCreated: (token: ApiToken) => void }) {
  const [name, setName] = useState('');
  const create = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const token = await create.run(() => post<ApiToken>('/v3/api-tokens', { name }));
    if (token) {
      setName('');
      onCreated(token);
    }
  };
  return (
    <Card title="New token">
      <form class="inline-form" onSubmit={submit} aria-label="New token">
        <TextField label="Name" required maxLength={100} value={name} onValue={setName} placeholder="CRM integration" hint="Say which program will hold it." />
        <div class="form-actions">
          <Button type="submit" pending={create.pending}>
            Create token
          </Button>
        </div>
      </form>
      <ErrorNote error={create.error} prefix="The token was not created." />
    </Card>
  );
}

function IssuedSecret({ issued, onDone }: { issued: Issued; onDone: () => void }) {
  return (
    <Card title={issued.rotated ? `New secret of “${issued.name}”` : `Token “${issued.name}” created`} id="issued-token">
      <p class="warning" role="alert">
        <strong>Shown once.</strong> Copy this secret now and keep it somewhere safe: the service stores only a hash and can never show it again.
        {issued.rotated && ' The old secret stopped working.'}
      </p>
      <SecretBox label="Token secret" value={issued.token} />
      <div class="form-actions">
        <Button variant="secondary" onClick={onDone}>
          I have copied it
        </Button>
      </div>
    </Card>
  );
}

function TokenRow({ token, writes, onRename, onRotated, onRevoked }: { token: ApiToken; writes: boolean; onRename: () => void; onRotated: (t: ApiToken) => void; onRevoked: () => void }) {
  const action = useAction();
  const path = `/v3/api-tokens/${encodeURIComponent(token.id)}`;
  const rotate = async () => {
    const rotated = await action.run(() => patch<ApiToken>(path, { refreshToken: true }));
    if (rotated) onRotated(rotated);
  };
  const revoke = async () => {
    if (await action.run(() => del(path))) onRevoked();
  };
  return (
    <tr aria-label={token.name}>
      <td>{token.name}</td>
      <td class="mono">
        {token.prefix}_…{token.tokenLast4}
      </td>
      <td>
        <When at={token.createdAt} />
      </td>
      <td>{token.lastUsedAt ? <When at={token.lastUsedAt} /> : <span class="muted">never</span>}</td>
      {writes && (
        <td>
          <div class="actions">
            <Button variant="link" onClick={onRename} aria-label={`Rename ${token.name}`}>
              Rename
            </Button>
            <ConfirmButton confirm="Old secret dies: rotate?" onConfirm={rotate} pending={action.pending} variant="secondary">
              Rotate
            </ConfirmButton>
            <ConfirmButton confirm="Revoke now?" onConfirm={revoke} pending={action.pending}>
              Revoke
            </ConfirmButton>
          </div>
          <ErrorNote error={action.error} />
        </td>
      )}
    </tr>
  );
}

function RenameToken({ token, onRenamed }: { token: ApiToken; onRenamed: () => void }) {
  const [name, setName] = useState(token.name);
  const rename = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    if (await rename.run(() => patch(`/v3/api-tokens/${encodeURIComponent(token.id)}`, { name }))) onRenamed();
  };
  return (
    <form onSubmit={submit} aria-label="Rename token">
      <TextField label="New name" required maxLength={100} value={name} onValue={setName} />
      <ErrorNote error={rename.error} prefix="Not renamed." />
      <div class="form-actions">
        <Button type="submit" pending={rename.pending}>
          Save name
        </Button>
      </div>
    </form>
  );
}

/**
 * The form of an OAuth app. Creating one sets everything of its registration (name, redirect
 * URIs, public or confidential, scopes); afterwards only the name, token expiry and required
 * scopes can change (what `PATCH /v3/oauth/clients/{id}` takes), so editing shows the rest as text.
 */
import { useState } from 'preact/hooks';
import { SCOPES, SCOPE_DESCRIPTIONS, type Scope } from '../../../../core/oauth/scopes.ts';
import { patch, post } from '../api.ts';
import { Button, Checkbox, ErrorNote, SelectField, TextArea, TextField } from '../components.tsx';
import { useAction } from '../data.ts';

export interface OAuthApp {
  client_id: string;
  client_id_issued_at: number | string;
  client_secret?: string;
  client_name?: string;
  client_uri?: string;
  redirect_uris: string[];
  token_endpoint_auth_method: string;
  scope: string;
  expire_access_tokens: boolean;
  required_scopes: string[];
  verified: boolean;
}

type ClientType = 'client_secret_basic' | 'none';
const CLIENT_TYPES = [
  { value: 'client_secret_basic', label: 'Confidential: a server that keeps a client secret' },
  { value: 'none', label: 'Public: a browser or mobile app (PKCE, no secret)' },
] as const;

export function AppForm({ app, onSaved, onCancel }: { app?: OAuthApp; onSaved: (app: OAuthApp) => void; onCancel: () => void }) {
  const [name, setName] = useState(app?.client_name ?? '');
  const [website, setWebsite] = useState(app?.client_uri ?? '');
  const [redirects, setRedirects] = useState(app?.redirect_uris.join('\n') ?? '');
  const [clientType, setClientType] = useState<ClientType>('client_secret_basic');
  const [scopes, setScopes] = useState<string[]>(app ? app.scope.split(' ').filter(Boolean) : ['profile']);
  const [required, setRequired] = useState<string[]>(app?.required_scopes ?? []);
  const [expire, setExpire] = useState(app?.expire_access_tokens ?? true);
  const action = useAction();

  const toggle = (list: string[], scope: string, on: boolean) => (on ? [...list, scope] : list.filter((s) => s !== scope));
  const requirable = (SCOPES as readonly Scope[]).filter((s) => scopes.includes(s));

  const submit = async (event: Event) => {
    event.preventDefault();
    const requiredScopes = required.filter((s) => scopes.includes(s));
    const saved = await action.run(() =>
      app
        ? patch<OAuthApp>(`/v3/oauth/clients/${encodeURIComponent(app.client_id)}`, { client_name: name.trim(), expire_access_tokens: expire, required_scopes: requiredScopes })
        : post<OAuthApp>('/v3/oauth/clients', {
            client_name: name.trim() || undefined,
            client_uri: website.trim() || undefined,
            redirect_uris: redirects.split(/\s+/).filter(Boolean),
            token_endpoint_auth_method: clientType,
            scope: scopes.join(' '),
            expire_access_tokens: expire,
            required_scopes: requiredScopes,
          }),
    );
    if (saved) onSaved(saved);
  };

  return (
    <form onSubmit={submit}>
      <TextField label="App name" value={name} onValue={setName} required maxLength={255} hint="Shown to members on the consent screen." />
      {app ? (
        <div class="field">
          <p>
            <strong>Redirect URIs and scopes</strong>
          </p>
          <p class="hint">
            Fixed at registration: <span class="mono">{app.redirect_uris.join(', ')}</span>; scopes <span class="mono">{app.scope}</span>. Register a new app to change them.
          </p>
        </div>
      ) : (
        <>
          <TextField label="Website" type="url" value={website} onValue={setWebsite} placeholder="https://example.com" hint="Optional: where members learn about the app." />
          <TextArea label="Redirect URIs" value={redirects} onValue={setRedirects} rows={3} required placeholder="https://example.com/oauth/callback" hint="One per line: where the authorization page sends members back with the code." />
          <SelectField label="Client type" value={clientType} options={CLIENT_TYPES} onValue={setClientType} />
          <fieldset>
            <legend>Scopes the app may ask for</legend>
            <div class="scope-grid">
              {SCOPES.map((scope) => (
                <Checkbox label={scope} hint={SCOPE_DESCRIPTIONS[scope]} checked={scopes.includes(scope)} onChecked={(on) => setScopes(toggle(scopes, scope, on))} />
              ))}
            </div>
          </fieldset>
        </>
      )}
      <fieldset>
        <legend>Required scopes</legend>
        <p class="hint">Locked on the consent screen: a member who drops one refuses the authorization.</p>
        {requirable.length === 0 ? (
          <p class="muted">Choose the scopes the app may ask for first.</p>
        ) : (
          <div class="scope-grid">
            {requirable.map((scope) => (
              <Checkbox label={`Require ${scope}`} checked={required.includes(scope)} onChecked={(on) => setRequired(toggle(required, scope, on))} />
            ))}
          </div>
        )}
      </fieldset>
      <Checkbox label="Access tokens expire" hint="On: short-lived access tokens with refresh tokens. Off: tokens never expire and no refresh token is issued." checked={expire} onChecked={setExpire} />
      <ErrorNote error={action.error} />
      <div class="form-actions">
        <Button type="submit" pending={action.pending}>
          {app ? 'Save' : 'Create app'}
        </Button>
        <Button variant="secondary" onClick={onCancel}>
          Cancel
        </Button>
      </div>
    </form>
  );
}

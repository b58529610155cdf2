/**
 * A new campaign: a name, a connection, a text message with `{{column}}` placeholders and the
 * recipients as a CSV (pasted, or a file read in the browser). The CSV is checked here, row by
 * row, before anything is sent; the campaign is saved as a draft, and launched from its page
 * once the person has seen what it holds (launching reserves the credits).
 */
import { useMemo, useState } from 'preact/hooks';
import { placeholdersOf } from '../../../../core/campaigns/audience.ts';
import { get, post } from '../api.ts';
import { Button, Card, EmptyState, ErrorNote, Loading, PageHeader, SelectField, TextArea, TextField } from '../components.tsx';
import { useAction, useLoad } from '../data.ts';
import { href, navigate } from '../router.ts';
import { parseAudience, type ParsedAudience } from './campaigns-csv.ts';
import { type Campaign, type Connection, pluginIsOff } from './campaigns-model.ts';
import { PluginOff } from './campaigns-parts.tsx';

type PaceChoice = 'default' | 'fastest' | 'custom';
const PACES = [
  { value: 'default', label: "The connection's default (20 a minute with a few seconds' jitter on unofficial numbers)" },
  { value: 'fastest', label: 'As fast as the queue goes' },
  { value: 'custom', label: 'A number of messages a minute' },
] as const;

const EXAMPLE = 'phone,name\n+15551230001,Ana\n+15551230002,Ben';

export function NewCampaign() {
  const connections = useLoad(() => get<Connection[]>('/v3/connections'), []);
  // Only to learn whether the campaigns plugin is on before the person fills the form in.
  const plugin = useLoad(() => get('/v3/campaigns', { per_page: 1 }), []);
  const [name, setName] = useState('');
  const [connectionId, setConnectionId] = useState('');
  const [text, setText] = useState('');
  const [csv, setCsv] = useState('');
  const [pace, setPace] = useState<PaceChoice>('default');
  const [perMinute, setPerMinute] = useState('10');
  const [startAt, setStartAt] = useState('');
  const action = useAction();

  const placeholders = useMemo(() => placeholdersOf(text), [text]);
  const audience = useMemo(() => (csv.trim() ? parseAudience(csv, placeholders) : undefined), [csv, placeholders]);
  const chosen = connectionId || connections.data?.[0]?.id || '';

  const submit = async (event: Event) => {
    event.preventDefault();
    const created = await action.run(() =>
      post<Campaign>('/v3/campaigns', {
        name: name.trim(),
        connectionId: chosen,
        message: { text },
        audience: { recipients: audience?.recipients ?? [] },
        ...(pace !== 'default' && { pace: { messagesPerMinute: pace === 'fastest' ? null : Number(perMinute) } }),
        ...(startAt && { schedule: { startAt, timezone: Intl.DateTimeFormat().resolvedOptions().timeZone } }),
        draft: true,
      }),
    );
    if (created) navigate('campaigns', created.id);
  };

  return (
    <>
      <PageHeader title="New campaign" description={<a href={href('campaigns')}>← All campaigns</a>} />
      {pluginIsOff(plugin.error) ? (
        <PluginOff />
      ) : !connections.data ? (
        <>
          <ErrorNote error={connections.error} />
          <Loading rows={5} label="Loading connections" />
        </>
      ) : connections.data.length === 0 ? (
        <Card title="No connection to send from">
          <EmptyState title="A campaign is sent from a connection">
            <a href={href('connections')}>Create a connection</a> first — a sandbox one needs no phone.
          </EmptyState>
        </Card>
      ) : (
        <form onSubmit={submit} class="split wide-right">
          <Card title="Message">
            <TextField label="Campaign name" value={name} onValue={setName} required maxLength={200} />
            <SelectField
              label="Send from"
              value={chosen}
              options={connections.data.map((c) => ({ value: c.id, label: `${c.name} (${c.driver}${c.phoneNumber ? `, ${c.phoneNumber}` : ''}) — ${c.status.toLowerCase()}` }))}
              onValue={setConnectionId}
            />
            <TextArea
              label="Message text"
              value={text}
              onValue={setText}
              rows={5}
              required
              hint={
                <>
                  <span class="mono">{'{{name}}'}</span> puts in the recipient's value of the CSV column <span class="mono">name</span>;{' '}
                  <span class="mono">{'{{name|there}}'}</span> falls back to “there” when it is empty.
                </>
              }
            />
            <SelectField label="Pace" value={pace} options={PACES} onValue={setPace} />
            {pace === 'custom' && <TextField label="Messages a minute" type="number" min={1} max={6000} value={perMinute} onValue={setPerMinute} required />}
            <TextField label="Start at (optional)" type="datetime-local" value={startAt} onValue={setStartAt} hint={`Your time zone (${Intl.DateTimeFormat().resolvedOptions().timeZone}); empty starts at launch.`} />
          </Card>
          <Card title="Recipients">
            <TextArea
              label="Recipients CSV"
              value={csv}
              onValue={setCsv}
              rows={8}
              class="mono"
              placeholder={EXAMPLE}
              hint="A header row, then one recipient a line: the phone column (phone, number, to or mobile; else the first) in international format, the other columns are variables for the message."
            />
            <CsvFile onText={setCsv} />
            {audience && <AudienceCheck audience={audience} placeholders={placeholders.map((p) => p.name)} />}
            <ErrorNote error={action.error} prefix="The campaign was not created." />
            <div class="form-actions">
              <Button type="submit" pending={action.pending} disabled={!audience || audience.recipients.length === 0}>
                Create draft
              </Button>
              <Button variant="secondary" onClick={() => navigate('campaigns')}>
                Cancel
              </Button>
            </div>
            <p class="hint">A draft reserves no credits and sends nothing; you launch it from its page.</p>
          </Card>
        </form>
      )}
    </>
  );
}

/** A CSV file from the computer, read here (nothing is uploaded before the campaign is created). */
function CsvFile({ onText }: { onText: (text: string) => void }) {
  const [problem, setProblem] = useState<string | undefined>();
  return (
    <div class="field">
      <label for="campaign-csv-file">Or upload a CSV file</label>
      <input
        id="campaign-csv-file"
        type="file"
        accept=".csv,text/csv,text/plain"
        onChange={async (e) => {
          const file = (e.currentTarget as HTMLInputElement).files?.[0];
          if (!file) return;
          setProblem(undefined);
          try {
            onText(await file.text());
          } catch {
            setProblem(`${file.name} could not be read.`);
          }
        }}
      />
      {problem && (
        <p class="error" role="alert">
          {problem}
        </p>
      )}
    </div>
  );
}

const SHOWN_PROBLEMS = 20;

function AudienceCheck({ audience, placeholders }: { audience: ParsedAudience; placeholders: string[] }) {
  if (audience.unusable) return <p class="warning">{audience.unusable}</p>;
  const unknown = placeholders.filter((p) => !audience.variables.includes(p));
  return (
    <div class="audience-check" aria-live="polite">
      <p class={audience.recipients.length > 0 ? 'notice' : 'warning'} id="audience-summary">
        <strong>{audience.recipients.length.toLocaleString()}</strong> recipient{audience.recipients.length === 1 ? '' : 's'} ready
        {audience.duplicates > 0 && `, ${audience.duplicates} repeated number${audience.duplicates === 1 ? '' : 's'} kept once`}
        {audience.problems.length > 0 && `, ${audience.problems.length} row${audience.problems.length === 1 ? '' : 's'} with a problem left out`}. Phone column:{' '}
        <span class="mono">{audience.phoneColumn}</span>
        {audience.variables.length > 0 && (
          <>
            ; variables: <span class="mono">{audience.variables.join(', ')}</span>
          </>
        )}
        .
      </p>
      {unknown.length > 0 && (
        <p class="warning">
          The message uses <span class="mono">{unknown.join(', ')}</span>, which no column gives.
        </p>
      )}
      {audience.problems.length > 0 && (
        <div class="error" role="alert">
          <strong>Rows left out:</strong>
          <ul>
            {audience.problems.slice(0, SHOWN_PROBLEMS).map((p) => (
              <li>
                Line {p.line}: {p.problem}
              </li>
            ))}
            {audience.problems.length > SHOWN_PROBLEMS && <li>…and {audience.problems.length - SHOWN_PROBLEMS} more</li>}
          </ul>
        </div>
      )}
    </div>
  );
}

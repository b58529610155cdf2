/**
 * One campaign, live: its counts (sent, failed, opted out, pending…) and recipients refresh every
 * two seconds while the tab is visible, and the buttons offered are the moves its status allows
 * (the campaign's own transition table): launch a draft, pause, resume, cancel, delete.
 */
import { useState } from 'preact/hooks';
import { canApply, FINAL_STATUSES } from '../../../../core/campaigns/campaign-status.ts';
import { del, get, itemsOf, post } from '../api.ts';
import { Button, Card, ConfirmButton, Count, EmptyState, ErrorNote, Loading, PageHeader, StatusBadge, Table, TextField, When } from '../components.tsx';
import { useAction, useLoad } from '../data.ts';
import { href, navigate } from '../router.ts';
import { useSession } from '../session.ts';
import { PluginOff, ProgressMeter } from './campaigns-parts.tsx';
import { type Campaign, type Connection, pending, pluginIsOff, type Recipient } from './campaigns-model.ts';

const EVERY = 2000;
const PER_PAGE = 50;

export function CampaignDetail({ id }: { id: string }) {
  const writes = useSession().may('messages.send', 'write');
  const campaign = useLoad(() => get<Campaign>(`/v3/campaigns/${id}`), [id], { every: EVERY });
  const c = campaign.data;

  if (pluginIsOff(campaign.error)) {
    return (
      <>
        <PageHeader title="Campaign" />
        <PluginOff />
      </>
    );
  }
  return (
    <>
      <PageHeader
        title={c ? c.name : 'Campaign'}
        description={<a href={href('campaigns')}>← All campaigns</a>}
        actions={c && writes && <Controls campaign={c} onChanged={campaign.reload} />}
      />
      <ErrorNote error={campaign.error} />
      {!c ? (
        !campaign.error && <Loading rows={4} label="Loading the campaign" />
      ) : (
        <>
          <Summary campaign={c} />
          <Recipients id={id} />
        </>
      )}
    </>
  );
}

/** The moves the campaign's status allows now; each answers the campaign as it became. */
function Controls({ campaign, onChanged }: { campaign: Campaign; onChanged: () => Promise<void> }) {
  const action = useAction();
  const move = (verb: 'launch' | 'pause' | 'resume' | 'cancel') => () => void action.run(() => post(`/v3/campaigns/${campaign.id}/${verb}`)).then((done) => done && onChanged());
  const status = campaign.status;
  return (
    <div class="stack">
      <div class="actions" aria-label="Campaign actions" role="group">
        {status === 'DRAFT' && (
          <Button onClick={move('launch')} pending={action.pending}>
            Launch
          </Button>
        )}
        {canApply(status, 'pause') && (
          <Button variant="secondary" onClick={move('pause')} pending={action.pending}>
            Pause
          </Button>
        )}
        {canApply(status, 'resume') && (
          <Button onClick={move('resume')} pending={action.pending}>
            Resume
          </Button>
        )}
        {canApply(status, 'cancel') && (
          <ConfirmButton confirm="Cancel for good?" onConfirm={move('cancel')} pending={action.pending}>
            Cancel campaign
          </ConfirmButton>
        )}
        {(status === 'DRAFT' || FINAL_STATUSES.includes(status)) && (
          <ConfirmButton
            confirm="Delete for good?"
            pending={action.pending}
            onConfirm={() => void action.run(() => del(`/v3/campaigns/${campaign.id}`)).then((done) => done && navigate('campaigns'))}
          >
            Delete
          </ConfirmButton>
        )}
      </div>
      <ErrorNote error={action.error} />
    </div>
  );
}

function Summary({ campaign: c }: { campaign: Campaign }) {
  const p = c.progress;
  const text = messageText(c.message);
  return (
    <>
      <Card title="Progress">
        <div class="row">
          <StatusBadge status={c.status} />
          {c.statusReason && <span class="muted">{c.statusReason.replaceAll('_', ' ')}</span>}
          <span class="muted">
            {c.status === 'DRAFT' ? 'Not launched yet: no credits reserved.' : c.startedAt ? <>Started <When at={c.startedAt} /></> : c.schedule.startAt ? <>Starts <When at={c.schedule.startAt} /></> : null}
            {c.finishedAt && <> · finished <When at={c.finishedAt} /></>}
          </span>
        </div>
        <ProgressMeter campaign={c} />
        <dl class="counts" aria-label="Recipients by status">
          <Stat label="Sent" value={p.sent} id="count-sent" />
          <Stat label="Delivered" value={p.delivered} />
          <Stat label="Read" value={p.read} />
          <Stat label="Replied" value={p.replied} />
          <Stat label="Failed" value={p.failed} id="count-failed" />
          <Stat label="Opted out" value={p.optedOut} id="count-opted-out" />
          <Stat label="Pending" value={pending(p)} id="count-pending" />
          <Stat label="Invalid" value={p.invalid} />
          <Stat label="Skipped" value={p.skipped} />
          <Stat label="Cancelled" value={p.cancelled} />
          <Stat label="Total" value={p.total} />
        </dl>
      </Card>
      <Card title="Settings">
        <dl class="facts">
          <dt>Message</dt>
          <dd>{text !== null ? <span class="message-text">{text}</span> : <code>{JSON.stringify(c.message)}</code>}</dd>
          <dt>Pace</dt>
          <dd>
            {c.pace.messagesPerMinute === null ? 'as fast as the queue goes' : `${c.pace.messagesPerMinute} a minute`}
            {c.pace.jitterSeconds > 0 && `, up to ${c.pace.jitterSeconds} s of jitter`}
            {c.pace.quietHours && `, quiet ${c.pace.quietHours.from}–${c.pace.quietHours.to} (${c.pace.quietHours.timezone})`}
          </dd>
          <dt>Credits</dt>
          <dd>
            <Count value={c.credits.reserved} /> reserved · <Count value={c.credits.consumed} /> used · <Count value={c.credits.refunded} /> given back · <Count value={c.credits.held} /> held
          </dd>
          <dt>Connection</dt>
          <dd>{c.connectionId ? <ConnectionName id={c.connectionId} /> : <span class="muted">deleted</span>}</dd>
        </dl>
      </Card>
    </>
  );
}

function ConnectionName({ id }: { id: string }) {
  const connection = useLoad(() => get<Connection>(`/v3/connections/${id}`), [id]);
  return <a href={href('connections', id)}>{connection.data ? `${connection.data.name} (${connection.data.driver})` : id}</a>;
}

function Stat({ label, value, id }: { label: string; value: number; id?: string }) {
  return (
    <div class="count" id={id}>
      <dt>{label}</dt>
      <dd>
        <Count value={value} />
      </dd>
    </div>
  );
}

function Recipients({ id }: { id: string }) {
  const [search, setSearch] = useState('');
  const [page, setPage] = useState(1);
  const recipients = useLoad(async () => {
    const answer = await get<{ totalPages: number; total: number }>(`/v3/campaigns/${id}/recipients`, { page, per_page: PER_PAGE, s: search.trim() });
    return { items: itemsOf<Recipient>(answer), totalPages: Number(answer.totalPages), total: Number(answer.total) };
  }, [id, page, search], { every: EVERY });
  const data = recipients.data;

  return (
    <Card title="Recipients">
      <div class="row">
        <TextField
          label="Search a number"
          type="search"
          value={search}
          onValue={(value) => {
            setSearch(value);
            setPage(1);
          }}
        />
      </div>
      <ErrorNote error={recipients.error} />
      {!data ? (
        <Loading />
      ) : data.items.length === 0 ? (
        <EmptyState title={search ? 'No recipient matches' : 'No recipients'} />
      ) : (
        <>
          <Table caption="Recipients in audience order" head={['#', 'Number', 'Status', 'Sent', 'Variables']}>
            {data.items.map((r) => (
              <tr>
                <td>{r.position + 1}</td>
                <td class="mono">+{r.phone}</td>
                <td>
                  <StatusBadge status={r.status} />
                  {r.error && <div class="muted">{r.error}</div>}
                  {r.repliedAt && <div class="muted">replied</div>}
                </td>
                <td>
                  <When at={r.dispatchedAt} />
                </td>
                <td class="muted">
                  {Object.entries(r.variables)
                    .filter(([, v]) => v !== '')
                    .map(([k, v]) => `${k}: ${v}`)
                    .join(', ') || '—'}
                </td>
              </tr>
            ))}
          </Table>
          {data.totalPages > 1 && (
            <div class="form-actions">
              <Button variant="secondary" disabled={page <= 1} onClick={() => setPage(page - 1)}>
                Previous
              </Button>
              <span class="muted">
                Page {page} of {data.totalPages} ({data.total.toLocaleString()} recipients)
              </span>
              <Button variant="secondary" disabled={page >= data.totalPages} onClick={() => setPage(page + 1)}>
                Next
              </Button>
            </div>
          )}
        </>
      )}
    </Card>
  );
}

/** The text of a text message; null for other kinds (shown as their JSON). */
function messageText(message: unknown): string | null {
  if (message && typeof message === 'object' && typeof (message as { text?: unknown }).text === 'string') return (message as { text: string }).text;
  return null;
}

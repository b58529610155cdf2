/**
 * Overview: the workspace at a glance — plan usage (connections, message credits available,
 * reserved and consumed this period), each connection's health, and recent webhook deliveries
 * that failed or are being retried.
 */
import { get, itemsOf } from '../api.ts';
import { Card, Count, EmptyState, ErrorNote, Loading, PageHeader, StatusBadge, When } from '../components.tsx';
import { useLoad } from '../data.ts';
import { href, type Route } from '../router.ts';
import { useSession } from '../session.ts';
import type { Connection } from './connections-model.ts';

interface Summary {
  plan: string;
  connections: { limit: number; used: number; remaining: number };
  messages: { limit: number; available: number; reserved: number; consumed: number; periodStart: string; periodEnd: string };
}


interface Delivery {
  id: string;
  event: string;
  state: string;
  attempts: number;
  attemptLog: { statusCode: number | null; error: string | null; at: string }[];
  updatedAt: string;
}

interface Failure extends Delivery {
  webhookId: string;
  webhookUrl: string;
}

export function OverviewPage(_: { route: Route }) {
  const session = useSession();
  const seesConnections = session.may('connections', 'read');
  const summary = useLoad(() => get<Summary>('/v3/summary'), [], { every: 15_000 });
  const connections = useLoad(() => (seesConnections ? get<Connection[]>('/v3/connections') : Promise.resolve([])), [], { every: 5_000 });
  const failures = useLoad(() => (seesConnections ? recentFailures() : Promise.resolve([])), [], { every: 15_000 });

  return (
    <>
      <PageHeader title="Overview" description={`${session.workspace.name}: plan usage, connection health and delivery problems.`} />
      <ErrorNote error={summary.error} prefix="Plan usage could not be read." />
      {summary.data ? <Usage summary={summary.data} /> : <Loading rows={2} label="Loading plan usage" />}
      {seesConnections && (
        <>
          <Card title="Connection health" actions={<a href={href('connections')}>All connections</a>}>
            <ErrorNote error={connections.error} />
            {!connections.data ? (
              <Loading />
            ) : connections.data.length === 0 ? (
              <EmptyState title="No connections yet">
                <a href={href('connections')}>Create a connection</a> — a sandbox one needs no phone.
              </EmptyState>
            ) : (
              <ul class="health" aria-label="Connections">
                {connections.data.map((c) => (
                  <li>
                    <a href={href('connections', c.id)}>{c.name}</a> <span class="muted">({c.driver}{c.phoneNumber ? `, ${c.phoneNumber}` : ''})</span>{' '}
                    <StatusBadge status={c.status} /> {c.statusReason && <span class="muted">{c.statusReason}</span>}
                  </li>
                ))}
              </ul>
            )}
          </Card>
          <Card title="Recent delivery failures" actions={<a href={href('webhooks')}>Webhooks</a>}>
            <ErrorNote error={failures.error} />
            {!failures.data ? (
              <Loading />
            ) : failures.data.length === 0 ? (
              <EmptyState title="No failed deliveries">Webhook deliveries that fail or wait for a retry show here.</EmptyState>
            ) : (
              <ul class="health" aria-label="Failed deliveries">
                {failures.data.map((f) => (
                  <li>
                    <StatusBadge status={f.state} /> <strong>{f.event}</strong> to <a href={href('webhooks', f.webhookId)}>{f.webhookUrl}</a>{' '}
                    <span class="muted">
                      after {f.attempts} attempt{f.attempts === 1 ? '' : 's'}: {lastProblem(f)} · <When at={f.updatedAt} />
                    </span>
                  </li>
                ))}
              </ul>
            )}
          </Card>
        </>
      )}
    </>
  );
}

function Usage({ summary }: { summary: Summary }) {
  const { connections, messages } = summary;
  return (
    <div class="grid usage">
      <Card title="Plan">
        <p class="stat">{summary.plan}</p>
        <p class="stat-label">
          Credits renew <When at={messages.periodEnd} />
        </p>
      </Card>
      <Card title="Connections">
        <p class="stat">
          <Count value={connections.used} /> <span class="muted">of</span> <Count value={connections.limit} />
        </p>
        <Meter used={connections.used} limit={connections.limit} label="Connections used" />
        <p class="stat-label">{connections.remaining} more allowed</p>
      </Card>
      <Card title="Message credits">
        <p class="stat">
          <Count value={messages.available} /> <span class="muted">available</span>
        </p>
        <Meter used={messages.consumed + messages.reserved} limit={messages.limit} label="Credits used or reserved" />
        <p class="stat-label">
          <Count value={messages.consumed} /> consumed · <Count value={messages.reserved} /> reserved · <Count value={messages.limit} /> a month
        </p>
      </Card>
    </div>
  );
}

function Meter({ used, limit, label }: { used: number; limit: number; label: string }) {
  const share = limit > 0 ? Math.min(100, Math.round((used / limit) * 100)) : 0;
  return (
    <div class="meter" role="meter" aria-label={label} aria-valuemin={0} aria-valuemax={limit} aria-valuenow={used}>
      <span style={{ width: `${share}%` }} />
    </div>
  );
}

async function recentFailures(): Promise<Failure[]> {
  const webhooks = itemsOf<{ id: string; url: string }>(await get('/v3/webhooks'));
  const pages = await Promise.all(
    webhooks.slice(0, 20).map(async (webhook) => {
      const deliveries = itemsOf<Delivery>(await get(`/v3/webhooks/${webhook.id}/deliveries`, { per_page: 20 }));
      return deliveries.filter((d) => d.state === 'FAILED' || d.state === 'RETRYING').map((d) => ({ ...d, webhookId: webhook.id, webhookUrl: webhook.url }));
    }),
  );
  return pages
    .flat()
    .sort((a, b) => b.updatedAt.localeCompare(a.updatedAt))
    .slice(0, 10);
}

function lastProblem(delivery: Delivery): string {
  const last = delivery.attemptLog.at(-1);
  if (!last) return 'not attempted yet';
  return last.error ?? (last.statusCode ? `HTTP ${last.statusCode}` : 'no answer');
}

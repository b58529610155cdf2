/**
 * A webhook's delivery log, newest first, refreshed every 3 seconds: each delivery's event and
 * state, every attempt (time, status code or error, duration), the exact body sent, and a
 * Redeliver button for a failed one (the service sends only failed deliveries again).
 */
import { get, itemsOf, post } from '../api.ts';
import { Button, Card, EmptyState, ErrorNote, Loading, StatusBadge, When } from '../components.tsx';
import { useAction, useLoad } from '../data.ts';

interface Attempt {
  attempt: number;
  at: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

interface Delivery {
  id: string;
  event: string;
  eventIds: string[];
  state: 'PENDING' | 'RETRYING' | 'SUCCEEDED' | 'FAILED';
  attempts: number;
  attemptLog: Attempt[];
  body: string;
  createdAt: string;
  updatedAt: string;
}

export function DeliveryLog({ webhookId, writes }: { webhookId: string; writes: boolean }) {
  const path = `/v3/webhooks/${encodeURIComponent(webhookId)}/deliveries`;
  const log = useLoad(async () => itemsOf<Delivery>(await get(path, { per_page: 50 })), [path], { every: 3000 });
  return (
    <Card title="Deliveries" id="deliveries">
      <p class="hint">Newest first, refreshed every 3 seconds. A delivery is tried 3 times (after 5 and 10 seconds) before it fails.</p>
      <ErrorNote error={log.error} />
      {!log.data ? (
        !log.error && <Loading label="Loading deliveries" />
      ) : log.data.length === 0 ? (
        <EmptyState title="No deliveries yet">They appear here as soon as a bound connection has an event this webhook subscribes to.</EmptyState>
      ) : (
        <ol class="deliveries" aria-label="Deliveries">
          {log.data.map((d) => (
            <DeliveryItem key={d.id} delivery={d} path={path} writes={writes} onRedelivered={log.reload} />
          ))}
        </ol>
      )}
    </Card>
  );
}

function DeliveryItem({ delivery, path, writes, onRedelivered }: { delivery: Delivery; path: string; writes: boolean; onRedelivered: () => void }) {
  const redeliver = useAction();
  const send = async () => {
    if (await redeliver.run(() => post(`${path}/${encodeURIComponent(delivery.id)}/redeliver`))) onRedelivered();
  };
  return (
    <li class="delivery" aria-label={`Delivery ${delivery.event}`}>
      <div class="delivery-head">
        <strong class="mono">{delivery.event}</strong> <StatusBadge status={delivery.state} />
        <span class="muted">
          {/* `attempts` counts the current round only (a redelivery starts a new one); the log keeps them all. */}
          {delivery.attemptLog.length} {delivery.attemptLog.length === 1 ? 'attempt' : 'attempts'} · <When at={delivery.createdAt} />
        </span>
        {writes && delivery.state === 'FAILED' && (
          <Button variant="secondary" onClick={send} pending={redeliver.pending}>
            Redeliver
          </Button>
        )}
      </div>
      <ErrorNote error={redeliver.error} prefix="Not sent again." />
      {delivery.attemptLog.length > 0 && <Attempts attempts={delivery.attemptLog} />}
      <details>
        <summary>Body sent</summary>
        <pre>{pretty(delivery.body)}</pre>
      </details>
    </li>
  );
}

function Attempts({ attempts }: { attempts: Attempt[] }) {
  return (
    <div class="table-wrap">
      <table class="attempts">
        <caption class="sr-only">Attempts</caption>
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">Time</th>
            <th scope="col">Answer</th>
            <th scope="col">Duration</th>
          </tr>
        </thead>
        <tbody>
          {attempts.map((a) => (
            <tr>
              <td>{a.attempt}</td>
              <td>
                <AttemptTime at={a.at} />
              </td>
              <td>
                {a.statusCode !== null && <span class={`mono ${a.statusCode < 400 ? 'ok' : 'bad'}`}>HTTP {a.statusCode}</span>}
                {a.error && <span class="attempt-error"> {a.error}</span>}
              </td>
              <td>{a.durationMs} ms</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Attempts come seconds apart: the time to the second, the date and exact instant on hover. */
function AttemptTime({ at }: { at: string }) {
  const date = new Date(at);
  return (
    <time dateTime={at} title={date.toLocaleString()}>
      {date.toLocaleTimeString(undefined, { timeStyle: 'medium' })}
    </time>
  );
}

/** The body as sent is one line of JSON; indented here for reading (the bytes signed are the original). */
function pretty(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}

import { Elysia, t } from 'elysia';
import { sql } from 'kysely';
import type { AppContext } from './context.ts';

/** A check of readiness: undefined when fine, else what is wrong, in a few words. */
export type ReadinessCheck = () => Promise<string | undefined> | string | undefined;

/**
 * Whether this process should be sent traffic (`/readyz`), as opposed to whether it is alive
 * (`/healthz`): not while it starts (until the server listens and its worker runs) nor once it
 * drains (a stop began), and only while each check passes: the database answers, its migrations
 * are all applied, and, where this process runs the worker, the worker's loops run.
 */
export class Readiness {
  private phase: 'starting' | 'serving' | 'draining' = 'starting';
  private readonly checks = new Map<string, ReadinessCheck>();

  check(name: string, check: ReadinessCheck): this {
    this.checks.set(name, check);
    return this;
  }

  serving(): void {
    if (this.phase === 'starting') this.phase = 'serving';
  }

  draining(): void {
    this.phase = 'draining';
  }

  async report(): Promise<{ ready: boolean; status: 'ready' | 'starting' | 'draining' | 'unavailable'; checks: Record<string, string> }> {
    const entries = await Promise.all(
      [...this.checks].map(async ([name, check]) => {
        try {
          return [name, (await withinTime(check())) ?? 'ok'] as const;
        } catch (error) {
          return [name, error instanceof Error ? error.message : String(error)] as const;
        }
      }),
    );
    const checks = Object.fromEntries(entries);
    const failing = entries.some(([, result]) => result !== 'ok');
    const status = this.phase === 'serving' ? (failing ? 'unavailable' : 'ready') : this.phase;
    return { ready: status === 'ready', status, checks };
  }
}

/** A check that hangs (a database that stopped answering) fails after this long. */
const CHECK_TIMEOUT_MS = 2_000;

async function withinTime<T>(value: Promise<T> | T): Promise<T | string> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<string>((resolve) => (timer = setTimeout(() => resolve(`no answer within ${CHECK_TIMEOUT_MS} ms`), CHECK_TIMEOUT_MS)));
  try {
    return await Promise.race([value, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The database answers a trivial query. */
export function databaseCheck(ctx: Pick<AppContext, 'db'>): ReadinessCheck {
  return async () => {
    await sql`select 1`.execute(ctx.db);
    return undefined;
  };
}

const ReadinessBody = t.Object({
  status: t.Union([t.Literal('ready'), t.Literal('starting'), t.Literal('draining'), t.Literal('unavailable')]),
  checks: t.Record(t.String(), t.String()),
});

/** `GET /readyz`: 200 when ready, else 503 naming what is not; public, like `/healthz`. */
export function readinessRoute(ctx: AppContext) {
  return new Elysia({ name: 'readiness' }).get(
    '/readyz',
    async ({ set }) => {
      const { ready, status, checks } = await ctx.readiness.report();
      set.headers['cache-control'] = 'no-store';
      if (!ready) set.status = 503;
      return { status, checks };
    },
    {
      response: { 200: ReadinessBody, 503: ReadinessBody },
      detail: {
        tags: ['Service'],
        summary: 'Readiness',
        description:
          'Whether this process should receive traffic: 200 `{"status":"ready","checks":{…}}` when the database answers, its migrations are all applied and, where the process runs the worker, the worker\'s loops run; ' +
          '503 with `status` `starting`, `draining` (a stop began) or `unavailable`, and each check\'s result (`ok` or what is wrong).',
      },
    },
  );
}

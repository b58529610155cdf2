import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createHttpApp } from '../../adapters/http/app.ts';
import { openTestContext, type TestContext } from '../support/context.ts';

/**
 * `/readyz` on a real database, phase by phase: 503 `starting` until the process serves, 200
 * `ready` while every check passes, 503 `unavailable` naming the failing check, and 503 `draining`
 * once a stop began (tests/integration/logs-and-health.test.ts drains a real process).
 */
let t: TestContext;
beforeAll(async () => {
  t = await openTestContext();
});
afterAll(async () => {
  await t.close();
});

async function readyz(app: ReturnType<typeof createHttpApp>): Promise<{ status: number; body: any }> {
  const res = await app.handle(new Request('http://localhost/readyz'));
  expect(res.headers.get('cache-control')).toBe('no-store');
  expect(res.headers.get('x-request-id')).toBeTruthy();
  return { status: res.status, body: await res.json() };
}

describe('GET /readyz', () => {
  test('starting, ready, unavailable with the failing check named, draining', async () => {
    const app = createHttpApp(t.ctx, []);
    expect(await readyz(app)).toEqual({ status: 503, body: { status: 'starting', checks: { database: 'ok' } } });

    t.ctx.readiness.serving();
    expect(await readyz(app)).toEqual({ status: 200, body: { status: 'ready', checks: { database: 'ok' } } });

    let workerRunning = false;
    t.ctx.readiness.check('worker', () => (workerRunning ? undefined : 'not running: webhook delivery engine'));
    expect(await readyz(app)).toEqual({ status: 503, body: { status: 'unavailable', checks: { database: 'ok', worker: 'not running: webhook delivery engine' } } });
    workerRunning = true;
    expect((await readyz(app)).status).toBe(200);

    // A check that throws fails with its message; one that hangs fails after its time limit.
    t.ctx.readiness.check('worker', () => {
      throw new Error('loop ended');
    });
    expect((await readyz(app)).body.checks.worker).toBe('loop ended');
    t.ctx.readiness.check('worker', () => new Promise<undefined>(() => {}));
    expect((await readyz(app)).body).toEqual({ status: 'unavailable', checks: { database: 'ok', worker: 'no answer within 2000 ms' } });
    t.ctx.readiness.check('worker', () => undefined);

    t.ctx.readiness.draining();
    expect(await readyz(app)).toEqual({ status: 503, body: { status: 'draining', checks: { database: 'ok', worker: 'ok' } } });
    // Draining is final: a later `serving` does not undo it.
    t.ctx.readiness.serving();
    expect((await readyz(app)).body.status).toBe('draining');
  });

  test('is public and documented under Service, like /healthz', async () => {
    const app = createHttpApp(t.ctx, []);
    const doc = (await (await app.handle(new Request('http://localhost/docs/json'))).json()) as any;
    const operation = doc.paths['/readyz'].get;
    expect(operation.tags).toEqual(['Service']);
    expect(operation.security).toBeUndefined();
    expect(Object.keys(operation.responses).sort()).toEqual(['200', '503']);
  });
});

import { beforeAll, describe, expect, test } from 'bun:test';
import { sql } from 'kysely';
import { up as unbindDeleted } from '../../adapters/postgres/migrations/base/0016_webhook_bindings_of_deleted_connections.ts';
import { useTestService } from '../support/service.ts';
import { expectStandardError, HOOK_TIMEOUT } from './helpers.ts';

/**
 * Issue 20, item 9. Spec 2.8: "`connections` | array of connection ids | If omitted, the webhook
 * has no bindings and receives nothing until connections are added with PATCH." Spec 4.4:
 * "PATCH `/v3/webhooks/{id}` | update, including adding `connections`".
 * Deleting a connection unbinds it from every webhook (so the list can be sent back as it is),
 * and PATCH adds and removes connections without resending the whole list.
 */

let apikey: string;

const service = useTestService({ env: { PLAN_PRO_CONNECTIONS: '50' } });

beforeAll(async () => {
  apikey = (await service.bootstrap({ plan: 'PRO' })).token;
}, HOOK_TIMEOUT);

const call = (method: string, path: string, body?: unknown) => service.call(method, path, { apikey, body });
const newConnection = async (name: string): Promise<string> => (await call('POST', '/v3/connections', { name })).body.id;
const newWebhook = async (connections: string[]) =>
  (await call('POST', '/v3/webhooks', { url: 'https://example.com/hook', events: ['messages.upsert'], connections })).body as { id: string; connections: string[] };

describe('issue 20 §9: a webhook’s connections', () => {
  test('deleting a connection removes it from every webhook; the list sent back as read is accepted', async () => {
    const [a, b] = [await newConnection('a'), await newConnection('b')];
    const first = await newWebhook([a, b]);
    const second = await newWebhook([a]);
    expect((await call('DELETE', `/v3/connections/${a}`)).status).toBe(200);

    const read = (await call('GET', `/v3/webhooks/${first.id}`)).body;
    expect(read.connections).toEqual([b]);
    expect((await call('GET', `/v3/webhooks/${second.id}`)).body.connections).toEqual([]);
    const listed = (await call('GET', '/v3/webhooks')).body.data;
    expect(listed.flatMap((w: any) => w.connections)).not.toContain(a);

    const patched = await call('PATCH', `/v3/webhooks/${first.id}`, { connections: read.connections });
    expect(patched.status).toBe(200);
    expect(patched.body.connections).toEqual([b]);
  });

  test('addConnections binds more without resending the list; removeConnections unbinds some', async () => {
    const [a, b, c] = [await newConnection('a'), await newConnection('b'), await newConnection('c')];
    const webhook = await newWebhook([]);
    const added = await call('PATCH', `/v3/webhooks/${webhook.id}`, { addConnections: [a, b] });
    expect(added.status).toBe(200);
    expect([...added.body.connections].sort()).toEqual([a, b].sort());
    const more = await call('PATCH', `/v3/webhooks/${webhook.id}`, { addConnections: [c, a] });
    expect([...more.body.connections].sort()).toEqual([a, b, c].sort());

    const removed = await call('PATCH', `/v3/webhooks/${webhook.id}`, { removeConnections: [b, crypto.randomUUID()] });
    expect(removed.status).toBe(200);
    expect([...removed.body.connections].sort()).toEqual([a, c].sort());
    expect([...(await call('GET', `/v3/webhooks/${webhook.id}`)).body.connections].sort()).toEqual([a, c].sort());

    // `connections` still replaces the set; add and remove apply after it.
    const replaced = await call('PATCH', `/v3/webhooks/${webhook.id}`, { connections: [b], addConnections: [c], removeConnections: [b] });
    expect(replaced.body.connections).toEqual([c]);
  });

  test('an unknown id to add, or an id both added and removed, is 400 naming the field', async () => {
    const a = await newConnection('a');
    const webhook = await newWebhook([a]);
    const unknown = await call('PATCH', `/v3/webhooks/${webhook.id}`, { addConnections: [crypto.randomUUID()] });
    expectStandardError(unknown, 400, 'Bad Request');
    expect(unknown.body.message[0]).toStartWith('body.addConnections names unknown connection(s)');
    const both = await call('PATCH', `/v3/webhooks/${webhook.id}`, { addConnections: [a], removeConnections: [a] });
    expectStandardError(both, 400, 'Bad Request');
    expect(both.body.message[0]).toStartWith('body.addConnections and body.removeConnections both name');
    expect((await call('GET', `/v3/webhooks/${webhook.id}`)).body.connections).toEqual([a]);
  });

  test('the OpenAPI document describes replacing, adding and removing', async () => {
    const op = (await service.call('GET', '/docs/json')).body.paths['/v3/webhooks/{id}'].patch;
    const properties = op.requestBody.content['application/json'].schema.properties;
    expect(Object.keys(properties)).toEqual(expect.arrayContaining(['connections', 'addConnections', 'removeConnections']));
    expect(op.description).toContain('`connections` replaces the bound set');
  });

  test('migration 0016 takes ids of connections deleted before the fix out of webhooks', async () => {
    const a = await newConnection('kept');
    const webhook = await newWebhook([a]);
    const gone = crypto.randomUUID();
    const db = service.runtime.ctx.db;
    await sql`update webhooks set connections = array_append(connections, ${gone}::uuid) where id = ${webhook.id}`.execute(db);
    expect((await call('GET', `/v3/webhooks/${webhook.id}`)).body.connections).toEqual([a, gone]);
    await unbindDeleted(db);
    expect((await call('GET', `/v3/webhooks/${webhook.id}`)).body.connections).toEqual([a]);
  });
});

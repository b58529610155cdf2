import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { AVAILABLE_PLUGINS } from '../../plugins/index.ts';
import { contactNotesPlugin } from '../fixtures/example-plugin/index.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { expectStandardError, HOOK_TIMEOUT, memberWithToken } from './helpers.ts';

/**
 * Issue 21: "a contributor can add a plugin by reading the architecture page and one example
 * plugin, touching nothing outside its folder and one line of configuration." The example plugin
 * (tests/fixtures/example-plugin, the one docs/contributing.md walks through) is loaded beside the
 * shipped plugins as one more catalogue entry; it brings its migration, routes, route scopes and a
 * subscriber, and reaches the host only through plugins/kernel/.
 */

const EXAMPLE = resolve(import.meta.dir, '../fixtures/example-plugin');
const ROOT = resolve(import.meta.dir, '../..');

let service: TestService;
let owner: { token: string; workspaceId: string };

beforeAll(async () => {
  service = await startTestService({ plugins: [...AVAILABLE_PLUGINS, contactNotesPlugin] });
  owner = await service.bootstrap();
}, HOOK_TIMEOUT);

afterAll(async () => {
  await service?.stop();
}, HOOK_TIMEOUT);

describe('the example plugin', () => {
  test('imports only core/, plugins/kernel/ and its own folder', () => {
    const files = readdirSync(EXAMPLE, { recursive: true }).map(String).filter((f) => f.endsWith('.ts'));
    expect(files.length).toBeGreaterThanOrEqual(5);
    const outside: string[] = [];
    for (const file of files) {
      const source = readFileSync(join(EXAMPLE, file), 'utf8');
      for (const [, spec] of source.matchAll(/from '(\.[^']+)'/g)) {
        const target = relative(ROOT, resolve(dirname(join(EXAMPLE, file)), spec!));
        if (!/^(core\/|plugins\/kernel\/|tests\/fixtures\/example-plugin\/)/.test(target)) outside.push(`${file} → ${target}`);
      }
    }
    expect(outside).toEqual([]);
  });

  test('its routes run under the roles matrix, with the spec\'s error shapes', async () => {
    const added = await service.call('POST', '/v3/example/contacts/+5511999990001/notes', { apikey: owner.token, body: { text: '  prefers mornings ' } });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ phone: '5511999990001', text: 'prefers mornings' });

    const bad = await service.call('POST', '/v3/example/contacts/abc/notes', { apikey: owner.token, body: { text: '' } });
    expectStandardError(bad, 400, 'Bad Request');
    expect(bad.body.message).toEqual(['phone must be 6 to 15 digits, optionally after a +', 'text must hold 1 to 500 characters']);

    // Spec 2.14: an Agent may not send messages, so may not add notes; nor read them.
    const agent = await memberWithToken(service, owner, 'AGENT');
    expectStandardError(await service.call('POST', '/v3/example/contacts/5511999990001/notes', { apikey: agent.token, body: { text: 'x' } }), 403, 'Forbidden');
    expectStandardError(await service.call('GET', '/v3/example/contacts/5511999990001/notes', { apikey: agent.token }), 403, 'Forbidden');

    // Another workspace sees none of it.
    const other = await service.bootstrap();
    const foreign = await service.call('GET', '/v3/example/contacts/5511999990001/notes', { apikey: other.token });
    expect(foreign.body).toEqual({ notes: [], inboundMessages: 0 });
    expectStandardError(await service.call('GET', '/v3/example/contacts/5511999990001/notes', {}), 401, 'Unauthorized');
  });

  test('its subscriber counts a contact\'s inbound messages once each', async () => {
    const created = await service.call('POST', '/v3/connections', { apikey: owner.token, body: { name: 'example' } });
    expect(created.status).toBe(201);
    expect((await service.call('POST', `/v3/connections/${created.body.id}/connect`, { apikey: owner.token })).body.status).toBe('CONNECTED');
    for (const text of ['hello', 'again']) {
      const injected = await service.call('POST', `/v3/connections/${created.body.id}/sandbox/messages`, { apikey: owner.token, body: { from: '5511999990002', text } });
      expect(injected.status).toBe(201);
    }
    const deadline = Date.now() + 20_000;
    let seen: any;
    do {
      seen = (await service.call('GET', '/v3/example/contacts/5511999990002/notes', { apikey: owner.token })).body;
      if (seen.inboundMessages >= 2) break;
      await Bun.sleep(100);
    } while (Date.now() < deadline);
    expect(seen).toEqual({ notes: [], inboundMessages: 2 });
  });

  test('its routes are in the OpenAPI document', async () => {
    const doc = await service.call('GET', '/docs/json');
    expect(Object.keys(doc.body.paths)).toContain('/v3/example/contacts/{phone}/notes');
  });
});

import { describe, expect, test } from 'bun:test';
import { useOwner, useTestService } from '../support/service.ts';
import { connectedConnection } from '../support/helpdesk.ts';

/**
 * The campaigns plugin loads by configuration (ARCHITECTURE.md: "A disabled plugin's routes
 * answer 404 and its jobs do not run"), and the helpdesk audience exists only with the helpdesk
 * plugin on (issue 8 item 1: "helpdesk contacts by label when the helpdesk plugin is on").
 */
describe('PLUGINS=campaigns (no helpdesk)', () => {
  const service = useTestService({ env: { PLUGINS: 'campaigns' } });
  const owner = useOwner(service);

  test('campaigns are served; a helpdesk audience is refused, naming the plugin it needs', async () => {
    const connectionId = await connectedConnection(service, owner.token, 'line');
    const refused = await service.call('POST', '/v3/campaigns', {
      apikey: owner.token,
      body: { name: 'x', connectionId, message: { text: 'x' }, audience: { helpdeskContacts: { labels: ['vip'] } } },
    });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body.message)).toContain('helpdesk plugin');
    expect((await service.call('GET', '/v3/campaigns', { apikey: owner.token })).status).toBe(200);
  });
});

describe('PLUGINS=helpdesk (no campaigns)', () => {
  const service = useTestService({ env: { PLUGINS: 'helpdesk' } });
  const owner = useOwner(service);

  test('the campaign routes answer 404', async () => {
    const answer = await service.call('GET', '/v3/campaigns', { apikey: owner.token });
    expect(answer.status).toBe(404);
    expect((await service.call('POST', '/v3/campaigns', { apikey: owner.token, body: {} })).status).toBe(404);
  });
});

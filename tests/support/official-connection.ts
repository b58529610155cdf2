import { expect } from 'bun:test';
import type { GraphSimulator } from './graph-simulator.ts';
import type { TestService } from './service.ts';

/**
 * A cloud-api connection of the simulator's number with the customer's own credentials, its
 * provider callback URL registered with the simulator, and connected (CONNECTED at once: the
 * credentials are the pairing).
 */
export async function officialConnection(service: TestService, sim: GraphSimulator, apikey: string, name = 'official'): Promise<{ connectionId: string; callbackUrl: string }> {
  const created = await service.call('POST', '/v3/connections', {
    apikey,
    body: {
      name,
      driver: 'cloud-api',
      credentials: cloudApiCredentials(sim),
    },
  });
  expect(created.status).toBe(201);
  const connectionId: string = created.body.id;
  const callbackUrl = `${service.url}/v3/webhooks/whatsapp/${connectionId}`;
  sim.callbackUrl = callbackUrl;
  expect((await service.call('POST', `/v3/connections/${connectionId}/connect`, { apikey })).body.status).toBe('CONNECTED');
  return { connectionId, callbackUrl };
}

/** The customer's own credentials of the simulator's number, as a `cloud-api` connection takes them. */
export function cloudApiCredentials(sim: GraphSimulator) {
  return { phoneNumberId: sim.phoneNumberId, businessAccountId: sim.businessAccountId, accessToken: sim.accessToken, appSecret: sim.appSecret, verifyToken: sim.verifyToken };
}

import { expect } from 'bun:test';
import type { TestService } from './service.ts';

/** A connection of the workspace of `apikey`, created (201) and left unpaired; answers its id. */
export async function newConnection(service: TestService, apikey: string, name: string): Promise<string> {
  const created = await service.call('POST', '/v3/connections', { apikey, body: { name } });
  expect(created.status).toBe(201);
  return created.body.id;
}

import { afterAll } from 'bun:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { HOOK_TIMEOUT, type TestService } from './service.ts';

/** MCP clients of a test file (the SDK's own, named `name`); every one is closed after the file's tests. */
export interface McpClients {
  /** A client on the service's `/v3/mcp`, authenticated with an API key. */
  withApiKey(apikey: string): Promise<Client>;
  /** A client over another transport (an app answering in process, say). */
  over(transport: Transport): Promise<Client>;
}

export function useMcpClients(service: TestService, name: string): McpClients {
  const clients: Client[] = [];
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
  }, HOOK_TIMEOUT);
  const over = async (transport: Transport) => {
    const client = new Client({ name, version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    return client;
  };
  return {
    over,
    withApiKey: (apikey) => over(new StreamableHTTPClientTransport(new URL(`${service.url}/v3/mcp`), { requestInit: { headers: { apikey } } })),
  };
}

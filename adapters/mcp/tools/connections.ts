import { t } from 'elysia';
import { getConnection, listConnections } from '../../../core/connections/connections.ts';
import type { Connection } from '../../../core/connections/connection.ts';
import { capabilityFlags } from '../../../core/connections/driver.ts';
import { poolMessagingStores } from '../../connections/stores.ts';
import type { AppContext } from '../../http/context.ts';
import { defineTool } from '../tool.ts';

/** Reading connections (numbers) and their status: `connections:read` (spec 2.7). */

/** The connection a tool reads, as list_connections names it (the history tools take it too). */
export const connectionId = t.String({ minLength: 1, description: 'Id of the connection (from list_connections)' });

export const listConnectionsTool = defineTool({
  name: 'list_connections',
  title: 'List connections',
  description:
    'Lists the connections (chat-network numbers) of the workspace with their id, name, driver and status. ' +
    'Only CONNECTED connections can send. Use the id as connectionId in the other tools.',
  scopes: ['connections:read'],
  input: t.Object({}),
  annotations: { readOnlyHint: true },
  async run(_input, { actor, ctx }) {
    const connections = await listConnections(poolMessagingStores(ctx).connections, actor);
    const summary =
      connections.length === 0
        ? 'No connections in this workspace.'
        : `${connections.length} connection(s):\n` + connections.map((c) => `- ${c.name} (${c.id}): ${c.driver}, ${c.status}${c.phoneNumber ? `, ${c.phoneNumber}` : ''}`).join('\n');
    return { structured: { connections: connections.map((c) => summaryOf(ctx, c)) }, summary };
  },
});

export const getConnectionTool = defineTool({
  name: 'get_connection',
  title: 'Get a connection',
  description: 'One connection: name, driver, status (DISCONNECTED, CONNECTING, QR_PENDING, CONNECTED, LOGGED_OUT), phone number and what its network supports.',
  scopes: ['connections:read'],
  input: t.Object({ connectionId }),
  annotations: { readOnlyHint: true },
  async run({ connectionId }, { actor, ctx }) {
    const c = await getConnection(poolMessagingStores(ctx).connections, actor, connectionId);
    const capabilities = ctx.drivers.get(c.driver)?.capabilities;
    return {
      structured: {
        ...summaryOf(ctx, c),
        statusReason: c.statusReason,
        capabilities: capabilityFlags(capabilities),
        createdAt: c.createdAt.toISOString(),
        updatedAt: c.updatedAt.toISOString(),
      },
      summary: `${c.name} (${c.id}): ${c.driver}, ${c.status}${c.statusReason ? ` (${c.statusReason})` : ''}`,
    };
  },
});

/** What an assistant needs of a connection; never its credentials or pairing codes. */
function summaryOf(ctx: AppContext, c: Connection) {
  return {
    id: c.id,
    name: c.name,
    driver: c.driver,
    official: ctx.drivers.get(c.driver)?.capabilities.official ?? false,
    status: c.status,
    phoneNumber: c.phoneNumber,
  };
}

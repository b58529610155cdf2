import type { Connection } from '../../core/connections/connection.ts';

/**
 * A connection as the stores keep it, for tests that run core use cases on fakes: a sandbox line,
 * DISCONNECTED and never paired, created at the epoch, with the given fields changed.
 */
export function connectionRow(fields: Partial<Connection> & Pick<Connection, 'id' | 'workspaceId'>): Connection {
  return {
    name: 'line',
    driver: 'sandbox',
    status: 'DISCONNECTED',
    credentials: {},
    phoneNumber: null,
    qr: null,
    pairingCode: null,
    statusReason: null,
    routingKey: null,
    createdAt: new Date(0),
    updatedAt: new Date(0),
    ...fields,
  };
}

import type { DriverEvents } from '../../core/connections/driver.ts';
import { applySessionUpdate } from '../../core/connections/connections.ts';
import { receivePassthrough, receiveReceipt } from '../../core/messaging/receive.ts';
import type { AppContext } from '../http/context.ts';
import { applyTemplateStatus } from './template-stores.ts';
import { messagingDeps, messagingUnitOfWork } from './stores.ts';
import { receiveBatcher } from './receive-batcher.ts';

/**
 * What a driver reports, carried into the core use cases, each in a transaction with the events
 * it publishes (messages in the transaction of the batch they arrived with).
 */
export function driverEventsFor(ctx: AppContext, connectionId: string): DriverEvents {
  const uow = messagingUnitOfWork(ctx);
  const deps = messagingDeps(ctx);
  const withConnection = <T>(work: (stores: Parameters<Parameters<typeof uow.transaction>[0]>[0], connection: NonNullable<Awaited<ReturnType<typeof findConnection>>>) => Promise<T>) =>
    uow.transaction(async (stores) => {
      const connection = await findConnection(stores, connectionId);
      if (connection) await work(stores, connection);
    });
  return {
    async status(update) {
      await uow.transaction((stores) => applySessionUpdate(stores, deps, connectionId, update));
    },
    async message(received) {
      // Stored with the messages of this connection arriving alongside it (receive-batcher.ts).
      await receiveBatcher(ctx).receive(connectionId, received);
    },
    async receipt(update) {
      await withConnection((stores, connection) => receiveReceipt(stores, deps, connection, update));
    },
    async passthrough(event, remoteJid, data) {
      await withConnection((stores, connection) => receivePassthrough(stores, connection, event, remoteJid, data));
    },
    async templateStatus(update) {
      await applyTemplateStatus(ctx, connectionId, update);
    },
  };
}

function findConnection(stores: { connections: { find(id: string): Promise<import('../../core/connections/connection.ts').Connection | undefined> } }, id: string) {
  return stores.connections.find(id);
}

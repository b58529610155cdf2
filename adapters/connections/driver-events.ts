import type { DriverEvents } from '../../core/connections/driver.ts';
import { applySessionUpdate } from '../../core/connections/connections.ts';
import { receiveMessage, receivePassthrough, receiveReceipt, ReplayedMessage } from '../../core/messaging/receive.ts';
import type { AppContext } from '../http/context.ts';
import { applyTemplateStatus } from './template-stores.ts';
import { messagingDeps, messagingUnitOfWork } from './stores.ts';

/**
 * What a driver reports, carried into the core use cases, each in its own transaction so the
 * change and the events it publishes commit together.
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
      let driver: string | undefined;
      try {
        await withConnection(async (stores, connection) => {
          const { stored } = await receiveMessage(stores, deps, connection, received);
          if (stored && !received.fromMe) driver = connection.driver;
        });
      } catch (error) {
        if (!(error instanceof ReplayedMessage)) throw error;
      }
      // A contact's message, counted once committed; a replay, or the account's own message
      // typed on the phone, is not.
      if (driver) ctx.metrics?.messageReceived(driver);
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

import { LostRace } from '../../../core/helpdesk/contacts/contact-import.ts';
import type { ContactStores } from '../../../core/helpdesk/contacts/contacts.ts';
import type { UnitOfWork } from '../../../core/shared/unit-of-work.ts';
import type { PluginContext } from '../../kernel/context.ts';
import { contactStores } from '../inboxes/inbox-and-contact-stores.ts';

/** SQLSTATEs of a transaction the database gave up so another could go on: deadlock_detected, serialization_failure. */
const RACE_STATES = new Set(['40P01', '40001']);

/**
 * The import's transactions: one that lost to a concurrent writer of the same contacts comes back
 * as core's LostRace, which the import answers by doing that work again, row by row. The SQLSTATE
 * is in `code` on PGlite and `pg`, in `errno` on Bun's native client.
 */
export function contactImportUnits(ctx: PluginContext): UnitOfWork<ContactStores> {
  return {
    transaction: (work) =>
      ctx.storage.transaction(contactStores, (stores) => work(stores)).catch((error: unknown) => {
        const e = error as { code?: unknown; errno?: unknown } | undefined;
        if (RACE_STATES.has(String(e?.code)) || RACE_STATES.has(String(e?.errno))) throw new LostRace(error);
        throw error;
      }),
  };
}

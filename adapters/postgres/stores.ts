import type { Kysely } from 'kysely';
import type { UnitOfWork } from '../../core/shared/unit-of-work.ts';
import type { Database } from './schema.ts';
import { identityStore } from './repositories/identity-store.ts';
import { apiTokenStore } from './repositories/api-token-store.ts';
import { creditStore } from './repositories/credit-store.ts';
import { oauthStore } from './repositories/oauth-store.ts';
import { invitationStore } from './repositories/invitation-store.ts';
import { sessionStore } from './repositories/session-store.ts';

/** Every base store, bound to one connection or transaction. */
export function baseStores(db: Kysely<Database>) {
  return {
    identity: identityStore(db),
    tokens: apiTokenStore(db),
    credits: creditStore(db),
    oauth: oauthStore(db),
    invitations: invitationStore(db),
    sessions: sessionStore(db),
    usage: {
      async connectionsHeld(workspaceId: string) {
        const row = await db
          .selectFrom('connections')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('workspace_id', '=', workspaceId)
          .executeTakeFirstOrThrow();
        return Number(row.n);
      },
    },
  };
}

export type BaseStores = ReturnType<typeof baseStores>;

export function unitOfWork(db: Kysely<Database>): UnitOfWork<BaseStores> {
  return { transaction: (work) => db.transaction().execute((trx) => work(baseStores(trx))) };
}

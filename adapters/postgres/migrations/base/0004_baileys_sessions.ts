import type { Kysely } from 'kysely';

/** Baileys auth state and session leases (filled in by the baileys driver work). */
export async function up(_db: Kysely<any>): Promise<void> {}

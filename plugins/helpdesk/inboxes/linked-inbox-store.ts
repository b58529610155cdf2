/** One link of an owner (an SLA policy, an agent bot) to an inbox it covers. */
export type InboxLink = { owner: string; inbox_id: string };

/**
 * Rows with the inboxes each is linked to, in the order `links` reads them. No rows, no read:
 * `links` is asked only for the owners there are.
 */
export async function withLinkedInboxes<R extends { id: string }, E>(
  rows: R[],
  links: (ownerIds: string[]) => Promise<InboxLink[]>,
  toEntity: (row: R, inboxIds: string[]) => E,
): Promise<E[]> {
  if (rows.length === 0) return [];
  const linked = await links(rows.map((r) => r.id));
  return rows.map((row) => toEntity(row, linked.filter((l) => l.owner === row.id).map((l) => l.inbox_id)));
}

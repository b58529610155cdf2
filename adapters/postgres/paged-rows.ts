import type { SelectQueryBuilder } from 'kysely';
import { page, pageOffset, type Page, type PageRequest } from '../../core/shared/pagination.ts';

/**
 * One page of a filtered listing (spec 2.2): the filtered query is counted, then `ordered` picks
 * and sorts its rows and the page is cut from them. Stores write only their filters, their order
 * and their row mapper.
 */
export function pageOfRows<DB, TB extends keyof DB, O, Row, T>(
  filtered: SelectQueryBuilder<DB, TB, O>,
  request: PageRequest,
  ordered: (query: SelectQueryBuilder<DB, TB, O>) => SelectQueryBuilder<DB, TB, Row>,
  toEntity: (row: Row) => T,
): Promise<Page<T>> {
  return pageOfLoadedRows(filtered, request, ordered, async (rows) => rows.map(toEntity));
}

/**
 * As `pageOfRows`, for entities that need more than their row (the inboxes they are linked to):
 * the page's rows are turned into entities together, with one more read for all of them.
 */
export async function pageOfLoadedRows<DB, TB extends keyof DB, O, Row, T>(
  filtered: SelectQueryBuilder<DB, TB, O>,
  request: PageRequest,
  ordered: (query: SelectQueryBuilder<DB, TB, O>) => SelectQueryBuilder<DB, TB, Row>,
  toEntities: (rows: Row[]) => Promise<T[]>,
): Promise<Page<T>> {
  // Kysely cannot name the selection over a generic table list: the count's row is stated.
  const { total } = (await filtered.select((eb) => eb.fn.countAll<string>().as('total')).executeTakeFirstOrThrow()) as { total: string };
  const rows = (await ordered(filtered).limit(request.perPage).offset(pageOffset(request)).execute()) as Row[];
  return page(await toEntities(rows), Number(total), request);
}

import { t, type TSchema } from 'elysia';
import { MAX_PER_PAGE, type Page } from '../../core/shared/pagination.ts';

/** Shared HTTP models: error bodies (spec 7.2), page query and envelope (spec 2.2). */
export const StandardError = t.Object(
  {
    statusCode: t.Integer(),
    message: t.Union([t.String(), t.Array(t.String())]),
    error: t.String(),
  },
  { description: 'Standard error body; `message` is a list with one entry per broken rule on validation failures' },
);

export const CodedError = t.Object(
  { message: t.String({ description: 'Machine code to branch on' }), hint: t.String({ description: 'Human text' }) },
  { description: 'Coded error body' },
);

/** Error answers every authenticated route may give. */
export const authErrors = {
  400: StandardError,
  401: StandardError,
  403: t.Union([StandardError, CodedError]),
  404: StandardError,
};

/** `page`, `per_page`, `s`; any other parameter (`perPage`, `search`) is ignored (spec 2.2). */
export const PageQuery = t.Object(
  {
    // Integers, checked by pageRequest so that every broken rule is reported in one answer.
    page: t.Optional(t.String({ description: 'Page number, an integer of at least 1; default 1', examples: ['1'] })),
    per_page: t.Optional(t.String({ description: `Items per page, an integer from 1 to ${MAX_PER_PAGE}; default 10`, examples: ['10'] })),
    s: t.Optional(t.String({ description: 'Free-text search' })),
  },
  { additionalProperties: true },
);

export function PageOf<T extends TSchema>(item: T) {
  return t.Object({
    data: t.Array(item),
    total: t.Integer(),
    totalPages: t.Integer(),
    currentPage: t.Integer(),
    perPage: t.Integer(),
  });
}

/** A page of items as the API shows it (`PageOf`): the same page, each item presented. */
export function presentPage<T, V>(page: Page<T>, present: (item: T) => V): Omit<Page<T>, 'data'> & { data: V[] } {
  return { ...page, data: page.data.map(present) };
}

export const Timestamp = t.String({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds' });
export const Uuid = t.String({ format: 'uuid' });

export function iso(date: Date): string;
export function iso(date: Date | null): string | null;
export function iso(date: Date | null): string | null {
  return date ? date.toISOString() : null;
}

/**
 * One of a few strings, for fields that may be left out. Elysia fills an omitted optional
 * `t.UnionEnum` with its first value (a PATCH without `priority` would set it to the first
 * priority); a union of literals has no such default.
 */
export function OneOf<const T extends string>(values: readonly T[], options: { description?: string } = {}) {
  return t.Union(
    values.map((value) => t.Literal(value)),
    options,
  );
}

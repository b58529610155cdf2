import { badRequest } from './errors.ts';

/** Page-based listing (spec 2.2). `perPage`/`search` are not ours to read: they are ignored. */
export interface PageRequest {
  page: number;
  perPage: number;
  search: string | undefined;
}

export interface Page<T> {
  data: T[];
  total: number;
  totalPages: number;
  currentPage: number;
  perPage: number;
}

export const DEFAULT_PER_PAGE = 10;
export const MAX_PER_PAGE = 100;

/** Reads `page`, `per_page` and `s` from a query string; every broken rule is reported at once. */
export function pageRequest(query: { page?: string; per_page?: string; s?: string }, maxPerPage = MAX_PER_PAGE): PageRequest {
  const problems: string[] = [];
  const page = integerParam(query.page, 1, 1, Number.MAX_SAFE_INTEGER, 'query.page must be an integer of at least 1', problems);
  const perPage = integerParam(query.per_page, DEFAULT_PER_PAGE, 1, maxPerPage, `query.per_page must be an integer from 1 to ${maxPerPage}`, problems);
  if (problems.length > 0) throw badRequest(problems);
  const search = query.s?.trim();
  return { page, perPage, search: search ? search : undefined };
}

function integerParam(raw: string | undefined, fallback: number, min: number, max: number, problem: string, problems: string[]): number {
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || value < min || value > max) {
    problems.push(problem);
    return fallback;
  }
  return value;
}

export function pageOffset(request: PageRequest): number {
  return (request.page - 1) * request.perPage;
}

export function page<T>(data: T[], total: number, request: PageRequest): Page<T> {
  return {
    data,
    total,
    totalPages: Math.ceil(total / request.perPage),
    currentPage: request.page,
    perPage: request.perPage,
  };
}

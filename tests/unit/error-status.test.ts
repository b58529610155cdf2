/**
 * Core errors carry domain kinds; the HTTP adapter gives each kind its status in one table
 * (adapters/http/error-status.ts). Every kind has a status, each helper keeps the status it
 * answered with when core still named statuses, and no other file maps errors to statuses.
 */
import { describe, expect, test } from 'bun:test';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { AiProviderError } from '../../core/helpdesk/ai/ai-assist.ts';
import { InvitationUnusable } from '../../core/identity/invitations.ts';
import { MediaTooLarge } from '../../core/media/media-limits.ts';
import { OAuthError, oauthError } from '../../core/oauth/errors.ts';
import { badRequest, coded, conflict, DOMAIN_ERROR_KINDS, DomainError, forbidden, notFound, unauthorized, unprocessable } from '../../core/shared/errors.ts';
import { PayloadTooLarge } from '../../adapters/http/body.ts';
import { HTTP_STATUS_OF_KIND, httpStatusOf } from '../../adapters/http/error-status.ts';
import { errorResponse } from '../../adapters/http/errors.ts';
import { TooManyRequests } from '../../adapters/http/rate-limit.ts';

describe('the table of statuses', () => {
  test('every kind has exactly one status, and the table names no other kind', () => {
    expect(Object.keys(HTTP_STATUS_OF_KIND).sort()).toEqual([...DOMAIN_ERROR_KINDS].sort());
    for (const kind of DOMAIN_ERROR_KINDS) {
      const status = HTTP_STATUS_OF_KIND[kind];
      expect(Number.isInteger(status) && status >= 400 && status <= 599).toBe(true);
    }
  });

  test('each kind is a distinct answer: no two kinds share a status', () => {
    const statuses = Object.values(HTTP_STATUS_OF_KIND);
    expect(new Set(statuses).size).toBe(statuses.length);
  });
});

describe('each error keeps the status it had when core named statuses', () => {
  const cases: Array<[string, DomainError, string, number]> = [
    ['badRequest', badRequest('x'), 'invalid_input', 400],
    ['unauthorized', unauthorized(), 'unauthenticated', 401],
    ['forbidden', forbidden(), 'forbidden', 403],
    ['notFound', notFound('x'), 'not_found', 404],
    ['conflict', conflict('x'), 'conflict', 409],
    ['unprocessable', unprocessable('x'), 'unprocessable', 422],
    ['coded forbidden', coded('forbidden', 'USER_PLAN_EXCEEDED_MESSAGES', 'x'), 'forbidden', 403],
    ['coded not_found', coded('not_found', 'CONNECTION_NOT_FOUND', 'x'), 'not_found', 404],
    ['InvitationUnusable', new InvitationUnusable('EXPIRED'), 'invalid_input', 400],
    ['MediaTooLarge', new MediaTooLarge('image', 5 * 1024 * 1024), 'too_large', 413],
    ['PayloadTooLarge', new PayloadTooLarge(1024), 'too_large', 413],
    ['TooManyRequests', new TooManyRequests(30), 'rate_limited', 429],
    ['AiProviderError', new AiProviderError('x'), 'upstream_failed', 502],
    ['a refused driver call, retryable', new DomainError('upstream_failed', 'x'), 'upstream_failed', 502],
    ['a network check, retryable', new DomainError('upstream_unavailable', 'x'), 'upstream_unavailable', 503],
    ['oauthError', oauthError('invalid_request', 'x'), 'invalid_input', 400],
    ['OAuthError of a client authentication', new OAuthError('invalid_client', 'x', 'unauthenticated'), 'unauthenticated', 401],
    ['OAuthError of a missing scope', new OAuthError('insufficient_scope', 'x', 'forbidden', 'messages:send'), 'forbidden', 403],
  ];

  for (const [name, error, kind, status] of cases) {
    test(`${name}: ${kind}, answered ${status}`, () => {
      expect(error.kind).toBe(kind as DomainError['kind']);
      expect(httpStatusOf(error)).toBe(status);
      expect(errorResponse('UNKNOWN', error).status).toBe(status);
    });
  }

  test('the bodies are the spec 7.2 shapes, with the status from the table', async () => {
    expect(await errorResponse('UNKNOWN', badRequest('body.to is required')).json()).toEqual({ statusCode: 400, message: ['body.to is required'], error: 'Bad Request' });
    expect(await errorResponse('UNKNOWN', notFound('No such chat')).json()).toEqual({ statusCode: 404, message: 'No such chat', error: 'Not Found' });
    const planned = errorResponse('UNKNOWN', coded('forbidden', 'USER_PLAN_EXCEEDED_MESSAGES', 'The plan allows no more messages'));
    expect([planned.status, await planned.json()]).toEqual([403, { message: 'USER_PLAN_EXCEEDED_MESSAGES', hint: 'The plan allows no more messages' }]);
    const oauth = errorResponse('UNKNOWN', new OAuthError('invalid_client', 'unknown client', 'unauthenticated'));
    expect([oauth.status, await oauth.json()]).toEqual([401, { error: 'invalid_client', error_description: 'unknown client' }]);
    const limited = errorResponse('UNKNOWN', new TooManyRequests(30));
    expect([limited.status, limited.headers.get('retry-after')]).toEqual([429, '30']);
  });
});

describe('the table is the one place', () => {
  const ROOT = join(import.meta.dir, '../..');
  const LAYERS = ['core', 'adapters', 'plugins', 'apps'];
  /** A status read off an error by its shape (`(error as { status?: number }).status`). */
  const DUCK_TYPED_STATUS = /as \{ status\?: (number|unknown) \}/;
  /** A kind given a number (`not_found: 404`, `'conflict': 409`). */
  const KIND_TO_NUMBER = new RegExp(String.raw`['"]?\b(${DOMAIN_ERROR_KINDS.join('|')})\b['"]?\s*:\s*\d{3}\b`);

  async function sources(): Promise<string[]> {
    const found: string[] = [];
    for (const layer of LAYERS) {
      const names = (await readdir(join(ROOT, layer), { recursive: true })).map(String);
      found.push(...names.filter((n) => n.endsWith('.ts')).map((n) => join(ROOT, layer, n)));
    }
    return found;
  }

  test('no other file gives a kind a status, and only the error renderer reads a status off an unknown error', async () => {
    const findings: string[] = [];
    for (const file of await sources()) {
      const path = relative(ROOT, file);
      const lines = (await readFile(file, 'utf8')).split('\n');
      lines.forEach((line, i) => {
        if (KIND_TO_NUMBER.test(line) && path !== 'adapters/http/error-status.ts') findings.push(`${path}:${i + 1}: ${line.trim()}`);
        // errors.ts reads `status` only off errors that are not DomainErrors (the framework's own).
        if (DUCK_TYPED_STATUS.test(line) && path !== 'adapters/http/errors.ts') findings.push(`${path}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(findings).toEqual([]);
  });
});

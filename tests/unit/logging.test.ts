import { describe, expect, test } from 'bun:test';
import { createLogger } from '../../adapters/logging/logger.ts';
import { prettyLine } from '../../adapters/logging/pretty.ts';
import { requestIdFor } from '../../adapters/http/request-log.ts';
import { loadConfig } from '../../apps/config.ts';

/** What a logger writes, line by line, parsed. */
function captured(level: Parameters<typeof createLogger>[0] = {}) {
  const lines: string[] = [];
  const log = createLogger({ ...level, stream: { write: (line: string) => void lines.push(line) } });
  return { log, records: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

describe('the logger', () => {
  test('one JSON object a line: level as a word, ISO time, msg, the fields given', () => {
    const { log, records } = captured();
    log.info({ requestId: 'r1', route: '/v3/accounts' }, 'request');
    const [record] = records();
    expect(record).toMatchObject({ level: 'info', msg: 'request', requestId: 'r1', route: '/v3/accounts' });
    expect(new Date(String(record!.time)).toISOString()).toBe(String(record!.time));
  });

  test('the level filters: at warn, info and debug are dropped', () => {
    const { log, records } = captured({ level: 'warn' });
    log.debug('no');
    log.info('no');
    log.warn('yes');
    log.error('yes too');
    expect(records().map((r) => r.level)).toEqual(['warn', 'error']);
  });

  test('secret-looking keys are blanked even when a caller passes them', () => {
    const { log, records } = captured();
    log.info({ password: 'p4ss', token: 'sk_live_x', nested: { authorization: 'Bearer y', body: 'hello' }, tokenId: 'kept' }, 'careless');
    const text = JSON.stringify(records()[0]);
    for (const secret of ['p4ss', 'sk_live_x', 'Bearer y', 'hello']) expect(text).not.toContain(secret);
    expect(records()[0]).toMatchObject({ tokenId: 'kept' });
  });
});

describe('readable lines for a terminal', () => {
  test('time, level, message and fields on one line; an error stack indented beneath', () => {
    const line = prettyLine(JSON.stringify({ level: 'warn', time: '2026-01-02T03:04:05.678Z', msg: 'request', status: 404, route: '/v3/x/:id', note: 'two words' }));
    expect(line).toBe('03:04:05.678 WARN  request status=404 route=/v3/x/:id note="two words"\n');
    const failed = prettyLine(JSON.stringify({ level: 'error', time: '2026-01-02T03:04:05.678Z', msg: 'unexpected error', error: { message: 'boom', stack: 'Error: boom\n    at f' } }));
    expect(failed).toBe('03:04:05.678 ERROR unexpected error\n  Error: boom\n      at f\n');
    expect(prettyLine('not json\n')).toBe('not json\n');
  });
});

describe('request ids', () => {
  test("the caller's when a bounded plain token, else a fresh UUID", () => {
    for (const id of ['abc', 'trace-42.a:b', 'Root=1-5759e988-bd862e3fe1be46a994272793', 'a'.repeat(128)]) expect(requestIdFor(id)).toBe(id);
    for (const id of [null, '', 'a'.repeat(129), 'two words', 'new\nline', '<script>', 'é']) {
      expect(requestIdFor(id)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    }
  });
});

describe('LOG_LEVEL and DRAIN_SECONDS', () => {
  test('LOG_LEVEL defaults to info, takes any level in any case, refuses others', () => {
    expect(loadConfig({}).logLevel).toBe('info');
    expect(loadConfig({ LOG_LEVEL: 'WARN' }).logLevel).toBe('warn');
    expect(loadConfig({ LOG_LEVEL: 'silent' }).logLevel).toBe('silent');
    expect(() => loadConfig({ LOG_LEVEL: 'verbose' })).toThrow(/LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, silent/);
  });

  test('DATABASE_POOL_SIZE defaults to 10 and must be a whole number of at least 1', () => {
    expect(loadConfig({}).databasePoolSize).toBe(10);
    expect(loadConfig({ DATABASE_POOL_SIZE: '4' }).databasePoolSize).toBe(4);
    expect(() => loadConfig({ DATABASE_POOL_SIZE: '0' })).toThrow(/DATABASE_POOL_SIZE must be an integer of at least 1/);
    expect(() => loadConfig({ DATABASE_POOL_SIZE: 'many' })).toThrow(/DATABASE_POOL_SIZE/);
  });

  test('DRAIN_SECONDS defaults to 0 and must be a whole number', () => {
    expect(loadConfig({}).drainSeconds).toBe(0);
    expect(loadConfig({ DRAIN_SECONDS: '10' }).drainSeconds).toBe(10);
    expect(() => loadConfig({ DRAIN_SECONDS: '-1' })).toThrow(/DRAIN_SECONDS/);
  });
});

describe('lines written however the process ends', () => {
  // Lines are gathered for a few milliseconds and written together (adapters/logging/logger.ts);
  // an exit before they are written must still write them.
  for (const how of ['idle', 'exit', 'throw'] as const) {
    test(`${how}: every line reaches standard output, in order`, () => {
      const child = Bun.spawnSync([process.execPath, 'tests/fixtures/log-then-exit.ts', how, '500'], { cwd: `${import.meta.dir}/../..`, stdout: 'pipe', stderr: 'pipe' });
      const numbered = child.stdout
        .toString()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => (JSON.parse(line) as { line: number }).line);
      expect(numbered).toEqual(Array.from({ length: 500 }, (_, i) => i));
      expect(child.exitCode).toBe(how === 'idle' ? 0 : how === 'exit' ? 3 : 1);
    });
  }
});

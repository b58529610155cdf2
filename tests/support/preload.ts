/**
 * Loaded before every test file (bunfig.toml `[test] preload`). `bun test` does not read
 * `[test] timeout` from bunfig.toml, so the default timeout is set here: integration tests
 * start a real app (PGlite or Postgres, pg-boss) in their hooks and need the room.
 * bun 1.4.5 applies it to the first test file of a run only, so a run of several files needs
 * `--timeout 60000` as well (scripts/test.ts passes it); a test's own timeout argument still wins.
 */
import { setDefaultTimeout } from 'bun:test';

setDefaultTimeout(60_000);

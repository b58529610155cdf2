/**
 * Loaded before every test file (bunfig.toml `[test] preload`). `bun test` does not read
 * `[test] timeout` from bunfig.toml, so the default timeout is set here: integration tests
 * start a real app (PGlite or Postgres, pg-boss) in their hooks and need the room.
 * This overrides `--timeout` on the command line (bun 1.4.5 applies the preload after the flag);
 * a test's or hook's own timeout argument still wins.
 */
import { setDefaultTimeout } from 'bun:test';

setDefaultTimeout(60_000);

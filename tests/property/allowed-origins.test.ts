import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { ConfigError, loadConfig } from '../../apps/config.ts';
import { DEFAULT_ALLOWED_ORIGINS, originAllowed, parseAllowedOrigins } from '../../core/shared/allowed-origins.ts';

/**
 * `MCP_ALLOWED_ORIGINS` (issue 20 item 12): the Origin check of the MCP endpoint. The service's
 * own origin always passes; the default lets local tools on any loopback port in and nothing else.
 */
const OWN = 'https://switchboard.example.com';
const defaults = parseAllowedOrigins(DEFAULT_ALLOWED_ORIGINS).origins;

describe('the default', () => {
  test('loopback origins on any port and the own origin pass; other sites, other schemes and `null` do not', () => {
    for (const origin of ['http://localhost:6274', 'http://127.0.0.1:5173', 'http://[::1]:8080', 'http://localhost', OWN, 'https://SWITCHBOARD.example.com:443']) {
      expect(originAllowed(defaults, origin, OWN)).toBe(true);
    }
    for (const origin of ['https://evil.example', 'https://localhost:6274', 'http://localhost.evil.example', 'null', 'file://', 'http://127.0.0.2:80', '']) {
      expect(originAllowed(defaults, origin, OWN)).toBe(false);
    }
  });

  test('property: a site other than loopback and the own origin never passes', () => {
    fc.assert(
      fc.property(fc.webUrl({ withQueryParameters: false, withFragments: false }), (url) => {
        const origin = new URL(url).origin;
        const host = new URL(url).hostname;
        fc.pre(!['localhost', '127.0.0.1', '[::1]', 'switchboard.example.com'].includes(host));
        expect(originAllowed(defaults, origin, OWN)).toBe(false);
      }),
    );
  });
});

describe('entries', () => {
  test('exact origins (default port normalised), origins on any port, and *', () => {
    const { origins, problems } = parseAllowedOrigins(' https://app.example.com , http://tools.internal:* ,https://x.example:443/');
    expect(problems).toEqual([]);
    expect(originAllowed(origins, 'https://app.example.com', OWN)).toBe(true);
    expect(originAllowed(origins, 'https://app.example.com:8443', OWN)).toBe(false);
    expect(originAllowed(origins, 'http://tools.internal:9999', OWN)).toBe(true);
    expect(originAllowed(origins, 'https://x.example', OWN)).toBe(true);
    expect(originAllowed(origins, 'http://localhost:6274', OWN)).toBe(false);
    expect(originAllowed(parseAllowedOrigins('*').origins, 'null', OWN)).toBe(true);
  });

  test('a bad entry stops the start with one line naming it, like OUTBOUND_ALLOW', () => {
    for (const bad of ['ftp://files.example', 'https://app.example.com/path', 'app.example.com', 'https://user:pw@app.example.com', 'https://a.example:1:*', 'https://a.example?x=1']) {
      let thrown: unknown;
      try {
        loadConfig({ MCP_ALLOWED_ORIGINS: `http://localhost:*,${bad}` });
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(ConfigError);
      expect((thrown as Error).message).toStartWith('MCP_ALLOWED_ORIGINS must list origins');
      expect((thrown as Error).message).not.toContain('\n');
    }
    // Unset or empty: the default.
    expect(originAllowed(loadConfig({ MCP_ALLOWED_ORIGINS: '' }).mcpAllowedOrigins, 'http://localhost:6274', OWN)).toBe(true);
  });
});

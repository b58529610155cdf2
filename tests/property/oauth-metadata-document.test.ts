import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { cacheSeconds, clientIdUrlProblem, METADATA_CACHE_MAX_SECONDS, METADATA_CACHE_MIN_SECONDS } from '../../core/oauth/metadata-document.ts';

/** Client ID Metadata Documents (issue 20 item 11): the cache bounds and the client_id URL rules of the draft. */
describe('metadata document rules', () => {
  test('a copy is kept between 5 minutes and 24 hours, whatever max-age says', () => {
    fc.assert(
      fc.property(fc.option(fc.double({ min: -1e9, max: 1e12, noNaN: false }), { nil: undefined }), (maxAge) => {
        const seconds = cacheSeconds(maxAge);
        expect(seconds).toBeGreaterThanOrEqual(METADATA_CACHE_MIN_SECONDS);
        expect(seconds).toBeLessThanOrEqual(METADATA_CACHE_MAX_SECONDS);
        if (maxAge !== undefined && maxAge >= METADATA_CACHE_MIN_SECONDS && maxAge <= METADATA_CACHE_MAX_SECONDS) expect(seconds).toBe(Math.floor(maxAge));
      }),
    );
  });

  test('client_id URLs: https with a path; no fragment, credentials or dot segments; http only where allowed', () => {
    const never = () => false;
    expect(clientIdUrlProblem('https://app.example/oauth/client.json', never)).toBeUndefined();
    expect(clientIdUrlProblem('https://app.example:8443/client?v=1', never)).toBeUndefined();
    expect(clientIdUrlProblem('http://app.example/client.json', never)).toContain('https');
    expect(clientIdUrlProblem('http://127.0.0.1:9/client.json', () => true)).toBeUndefined();
    expect(clientIdUrlProblem('https://app.example/', never)).toContain('path');
    expect(clientIdUrlProblem('https://app.example', never)).toContain('path');
    expect(clientIdUrlProblem('https://app.example/client.json#x', never)).toContain('fragment');
    expect(clientIdUrlProblem('https://u:p@app.example/client.json', never)).toContain('credentials');
    expect(clientIdUrlProblem('https://app.example/a/./client.json', never)).toContain('normal form');
    expect(clientIdUrlProblem('https://app.example/a/../client.json', never)).toContain('normal form');
    expect(clientIdUrlProblem('not a url', never)).toContain('absolute URL');
  });
});

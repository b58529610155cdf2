import { expect, test } from 'bun:test';
import fc from 'fast-check';
import { nativeSignDelivery } from '../../adapters/crypto/native-hmac.ts';
import { signDelivery, verifyDelivery } from '../../core/webhooks/signature.ts';

/** The delivery engine signs natively (adapters/crypto/native-hmac.ts): the value must be core's, byte for byte (spec 6.4). */
test('the native delivery signature equals the reference one for any secret, time and body', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'grapheme', maxLength: 80 }), fc.nat(), fc.string({ unit: 'grapheme', maxLength: 2000 }), (secret, timestamp, body) => {
      const native = nativeSignDelivery(secret, timestamp, body);
      expect(native).toBe(signDelivery(secret, timestamp, body));
      expect(verifyDelivery(secret, body, { signature: native, timestamp: String(timestamp) }, timestamp)).toBe(true);
    }),
    { numRuns: 300 },
  );
});

import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import {
  decryptFlowRequest,
  encryptFlowResponse,
  flipIv,
  FlowDecryptionError,
  generateFlowKeyPair,
} from '../../adapters/crypto/flow-encryption.ts';
import { classifyFlowRequest, errorAnswer, readCustomerReply } from '../../core/flows/data-exchange.ts';
import { platformDecrypt, platformEncrypt } from '../support/graph-simulator-flows.ts';

/**
 * Flow data-exchange encryption (issue 9 item 4: "RSA-OAEP with SHA-256 unwraps the AES-128
 * key; AES-128-GCM decrypts the payload … encrypts the answer with the same key and the
 * bit-flipped IV"), against the platform's side written independently in tests/support.
 */
const ours = generateFlowKeyPair();
const another = generateFlowKeyPair();
const payloads = fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 });

describe('Flow encryption round trip', () => {
  test('any request the platform encrypts with our public key decrypts to itself, and our answer decrypts on the platform side', () => {
    fc.assert(
      fc.property(payloads, payloads, (question, reply) => {
        const { body, aesKey, iv } = platformEncrypt(question, ours.publicKeyPem);
        const decrypted = decryptFlowRequest(ours.privateKeyPem, body);
        expect(decrypted.payload).toEqual(JSON.parse(JSON.stringify(question)));
        expect(decrypted.aesKey.equals(aesKey)).toBe(true);
        expect(platformDecrypt(encryptFlowResponse(reply, decrypted.aesKey, decrypted.iv), aesKey, iv)).toEqual(JSON.parse(JSON.stringify(reply)));
      }),
      { numRuns: 40 },
    );
  });

  test('the answer is not encrypted with the request’s own IV (the platform would not read it)', () => {
    const { body, aesKey, iv } = platformEncrypt({ action: 'ping', version: '3.0' }, ours.publicKeyPem);
    const decrypted = decryptFlowRequest(ours.privateKeyPem, body);
    const answer = encryptFlowResponse({ data: { status: 'active' } }, decrypted.aesKey, decrypted.iv);
    // Decrypting with the unflipped IV fails: the IV really is flipped.
    expect(() => platformDecrypt(answer, aesKey, flipIv(iv))).toThrow();
  });

  test('flipping the IV twice gives it back, and no byte stays the same', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 32 }), (iv) => {
        const flipped = flipIv(iv);
        expect([...flipIv(flipped)]).toEqual([...iv]);
        expect([...flipped].every((b, i) => b !== iv[i])).toBe(true);
      }),
    );
  });

  test('a request encrypted with another public key is a FlowDecryptionError (the endpoint answers 421)', () => {
    const { body } = platformEncrypt({ action: 'ping', version: '3.0' }, another.publicKeyPem);
    expect(() => decryptFlowRequest(ours.privateKeyPem, body)).toThrow(FlowDecryptionError);
  });

  test('any altered byte of the payload is a FlowDecryptionError (GCM tag)', () => {
    fc.assert(
      fc.property(payloads, fc.nat(), fc.integer({ min: 1, max: 255 }), (question, at, xor) => {
        const { body } = platformEncrypt(question, ours.publicKeyPem);
        const bytes = Buffer.from(body.encrypted_flow_data, 'base64');
        const i = at % bytes.length;
        bytes[i] = bytes[i]! ^ xor;
        expect(() => decryptFlowRequest(ours.privateKeyPem, { ...body, encrypted_flow_data: bytes.toString('base64') })).toThrow(FlowDecryptionError);
      }),
      { numRuns: 40 },
    );
  });
});

describe('what the endpoint does with a decrypted request (spec 6.2)', () => {
  test('ping is the service’s; an error notification is acknowledged; everything else is a question', () => {
    expect(classifyFlowRequest({ action: 'ping', version: '3.0' })).toBe('ping');
    expect(classifyFlowRequest({ action: 'data_exchange', screen: 'A', data: { error: 'x', error_message: 'bad' }, flow_token: 't' })).toBe('error_notification');
    fc.assert(
      fc.property(fc.constantFrom('INIT', 'BACK', 'data_exchange'), fc.dictionary(fc.string().filter((k) => k !== 'error'), fc.jsonValue({ maxDepth: 2 })), (action, data) => {
        expect(classifyFlowRequest({ action, data, flow_token: 't', version: '3.0' })).toBe('question');
      }),
    );
  });

  test('"A bare 200 breaks the form": a bare 200, a non-object, a timeout or no screen is a failure, never an answer', () => {
    // Spec 6.2: "the response body must be a JSON object { screen: <next screen>, data: <object> } … A bare 200 breaks the form."
    for (const reply of [
      { status: 200, answer: '' },
      { status: 200, answer: '[1,2]' },
      { status: 200, answer: '"text"' },
      { status: 200, answer: 'not json' },
      { status: 200, answer: '{"data":{}}' },
      { status: 500, answer: '{"screen":"B","data":{}}' },
      { error: 'timeout after 5000 ms' },
    ]) {
      expect(readCustomerReply(reply).ok).toBe(false);
    }
    expect(readCustomerReply({ status: 200, answer: '{"screen":"B","data":{"x":1}}' })).toEqual({ ok: true, answer: { screen: 'B', data: { x: 1 } } });
  });

  test('a failure shows the current screen again with error_message; without a current screen there is no such answer', () => {
    expect(errorAnswer({ action: 'data_exchange', screen: 'A', data: {} }, 'timeout')).toEqual({ screen: 'A', data: { error_message: expect.stringContaining('timeout') } });
    expect(errorAnswer({ action: 'INIT', data: {} }, 'timeout')).toBeUndefined();
  });
});

import { createCipheriv, createDecipheriv, generateKeyPairSync, privateDecrypt, constants } from 'node:crypto';

/**
 * Flow data-exchange encryption (spec 4.3 "Flow kinds", issue 9 item 4), as the network
 * documents it for a Flow endpoint:
 *
 * - the business owns an RSA-2048 key pair per phone number and registers the public half;
 * - each request is `{ encrypted_flow_data, encrypted_aes_key, initial_vector }` (base64): the
 *   AES-128 key is wrapped with RSA-OAEP (SHA-256, MGF1 SHA-256), the payload is AES-128-GCM
 *   with the 16-byte tag appended to the ciphertext;
 * - the answer is AES-128-GCM with the same key and the IV with every byte flipped (XOR 0xFF),
 *   ciphertext + tag, base64, sent as `text/plain`.
 */

export interface FlowKeyPair {
  /** SPKI PEM: what is registered with the platform (`business_public_key`). */
  publicKeyPem: string;
  /** PKCS#8 PEM: sealed at rest, never leaves the service. */
  privateKeyPem: string;
}

export interface EncryptedFlowRequest {
  encrypted_flow_data: string;
  encrypted_aes_key: string;
  initial_vector: string;
}

/** What a decrypted request holds: the plain payload, and the key and IV its answer needs. */
export interface DecryptedFlowRequest {
  payload: unknown;
  aesKey: Buffer;
  iv: Buffer;
}

const TAG_LENGTH = 16;

/** The request cannot be decrypted with our key: the platform answers by refreshing the public key (HTTP 421). */
export class FlowDecryptionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FlowDecryptionError';
  }
}

export function generateFlowKeyPair(): FlowKeyPair {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { publicKeyPem: publicKey, privateKeyPem: privateKey };
}

/** The three base64 fields of a data-exchange request, or undefined when the body is not one. */
export function asEncryptedFlowRequest(body: unknown): EncryptedFlowRequest | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const { encrypted_flow_data, encrypted_aes_key, initial_vector } = body as Record<string, unknown>;
  if (typeof encrypted_flow_data !== 'string' || typeof encrypted_aes_key !== 'string' || typeof initial_vector !== 'string') return undefined;
  return { encrypted_flow_data, encrypted_aes_key, initial_vector };
}

/** Unwraps the AES key with the private key and decrypts the payload; any failure is a `FlowDecryptionError`. */
export function decryptFlowRequest(privateKeyPem: string, request: EncryptedFlowRequest): DecryptedFlowRequest {
  let aesKey: Buffer;
  try {
    aesKey = privateDecrypt({ key: privateKeyPem, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, Buffer.from(request.encrypted_aes_key, 'base64'));
  } catch {
    throw new FlowDecryptionError('The AES key cannot be unwrapped with this phone number’s private key');
  }
  if (aesKey.length !== 16) throw new FlowDecryptionError('The unwrapped key is not an AES-128 key');
  const iv = Buffer.from(request.initial_vector, 'base64');
  const data = Buffer.from(request.encrypted_flow_data, 'base64');
  if (iv.length === 0 || data.length < TAG_LENGTH) throw new FlowDecryptionError('The encrypted payload or its IV is too short');
  let plain: string;
  try {
    const decipher = createDecipheriv('aes-128-gcm', aesKey, iv);
    decipher.setAuthTag(data.subarray(data.length - TAG_LENGTH));
    plain = Buffer.concat([decipher.update(data.subarray(0, data.length - TAG_LENGTH)), decipher.final()]).toString('utf8');
  } catch {
    throw new FlowDecryptionError('The payload does not decrypt with the unwrapped key (bad tag)');
  }
  try {
    return { payload: JSON.parse(plain) as unknown, aesKey, iv };
  } catch {
    throw new FlowDecryptionError('The decrypted payload is not JSON');
  }
}

/** The answer to a request: AES-128-GCM with the request's key and the flipped IV, ciphertext + tag, base64. */
export function encryptFlowResponse(answer: unknown, aesKey: Buffer, iv: Buffer): string {
  const cipher = createCipheriv('aes-128-gcm', aesKey, flipIv(iv));
  const body = Buffer.concat([cipher.update(JSON.stringify(answer), 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return body.toString('base64');
}

/** Every byte of the IV XOR 0xFF. */
export function flipIv(iv: Uint8Array): Buffer {
  return Buffer.from(iv.map((byte) => byte ^ 0xff));
}

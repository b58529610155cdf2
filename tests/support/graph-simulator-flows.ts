import { constants, createCipheriv, createDecipheriv, createHmac, createPublicKey, publicEncrypt, randomBytes, randomInt } from 'node:crypto';
import type { GraphSimulator } from './graph-simulator.ts';

/**
 * Teaches the Graph simulator the Flows API and the Flow encryption key, as the platform
 * documents them:
 *
 * - `POST /{waba-id}/flows` (name, categories, endpoint_uri?) → `{ id }`
 * - `POST /{flow-id}/assets` multipart (`file` flow.json, `name`, `asset_type: FLOW_JSON`)
 *   → `{ success: true, validation_errors: [...] }`
 * - `POST /{flow-id}/publish` → `{ success: true }`; refused (139002) with validation errors
 *   or, for a data_exchange Flow, without an endpoint_uri and a registered key
 * - `POST /{phone-number-id}/whatsapp_business_encryption` (`business_public_key`, PEM) →
 *   `{ success: true }`; `GET` → `{ data: [{ business_public_key, business_public_key_signature_status }] }`
 *
 * and `flowPlatform(sim)`: the platform's side of a data-exchange call, which encrypts a
 * request with the registered public key exactly as documented (AES-128-GCM payload, tag
 * appended; the key wrapped with RSA-OAEP SHA-256; 16-byte IV), signs it with the app secret,
 * and decrypts the answer with the flipped IV.
 */
export interface SimulatedFlow {
  id: string;
  name: string;
  categories: string[];
  endpointUri?: string;
  flowJson?: Record<string, any>;
  validationErrors: Array<Record<string, unknown>>;
  status: 'DRAFT' | 'PUBLISHED';
}

export function teachFlows(sim: GraphSimulator) {
  const flows = new Map<string, SimulatedFlow>();
  /** Registered public keys (PEM) by phone number id. */
  const publicKeys = new Map<string, string>();

  sim.extend({
    async handle(request, parts) {
      const [nodeId, edge] = parts;
      if (parts.length !== 2 || !nodeId) return undefined;
      if (edge === 'flows' && request.method === 'POST') {
        if (nodeId !== sim.businessAccountId) return sim.graphError(400, 100, `Unsupported post request. Object with ID '${nodeId}' does not exist`);
        const body = (await request.json().catch(() => ({}))) as Record<string, any>;
        if (typeof body.name !== 'string' || !body.name) return sim.graphError(400, 100, '(#100) The parameter name is required.');
        if ([...flows.values()].some((f) => f.name === body.name)) return sim.graphError(400, 100, '(#100) Flow name is not unique');
        const id = `${randomInt(1, 10)}${String(randomInt(0, 100_000_000_000_000)).padStart(14, '0')}`;
        flows.set(id, { id, name: body.name, categories: body.categories ?? [], endpointUri: body.endpoint_uri, validationErrors: [], status: 'DRAFT' });
        return Response.json({ id });
      }
      const flow = flows.get(nodeId);
      if (edge === 'assets' && request.method === 'POST' && flow) {
        const form = await request.formData();
        const file = form.get('file');
        if (form.get('asset_type') !== 'FLOW_JSON' || form.get('name') !== 'flow.json' || !(file instanceof Blob)) {
          return sim.graphError(400, 100, '(#100) The parameters file, name (flow.json) and asset_type (FLOW_JSON) are required.');
        }
        let json: Record<string, any> | undefined;
        try {
          json = JSON.parse(await file.text());
        } catch {
          json = undefined;
        }
        flow.flowJson = json;
        flow.validationErrors = json ? validateFlowJson(json) : [{ error: 'INVALID_JSON', error_type: 'JSON_SCHEMA_ERROR', message: 'The Flow JSON is not valid JSON.' }];
        return Response.json({ success: true, validation_errors: flow.validationErrors });
      }
      if (edge === 'publish' && request.method === 'POST' && flow) {
        const dataExchange = flow.flowJson?.data_api_version !== undefined;
        if (!flow.flowJson || flow.validationErrors.length > 0) return sim.graphError(400, 139002, 'Publishing Flow in invalid state: the Flow JSON has validation errors.');
        if (dataExchange && (!flow.endpointUri || !publicKeys.has(sim.phoneNumberId))) {
          return sim.graphError(400, 139002, 'Publishing Flow in invalid state: an endpoint_uri and a business public key are required.');
        }
        flow.status = 'PUBLISHED';
        return Response.json({ success: true });
      }
      if (edge === 'whatsapp_business_encryption' && nodeId === sim.phoneNumberId) {
        if (request.method === 'GET') {
          const key = publicKeys.get(nodeId);
          return Response.json({ data: key ? [{ business_public_key: key, business_public_key_signature_status: 'VALID' }] : [] });
        }
        if (request.method === 'POST') {
          const form = await request.formData();
          const pem = form.get('business_public_key');
          try {
            if (typeof pem !== 'string' || createPublicKey(pem).asymmetricKeyDetails?.modulusLength !== 2048) throw new Error('not RSA-2048');
          } catch {
            return sim.graphError(400, 100, '(#100) Param business_public_key must be a valid 2048-bit RSA public key in PEM format.');
          }
          // A multipart form value arrives with CRLF line ends.
          publicKeys.set(nodeId, pem.replace(/\r\n/g, '\n'));
          return Response.json({ success: true });
        }
      }
      return undefined;
    },
  });

  return { flows, publicKeys };
}

/** The platform's own checks of a Flow JSON, as findings (never an HTTP error). */
function validateFlowJson(json: Record<string, any>): Array<Record<string, unknown>> {
  const screens: any[] = Array.isArray(json.screens) ? json.screens : [];
  const errors: Array<Record<string, unknown>> = [];
  if (!screens.some((s) => s?.terminal === true)) {
    errors.push({ error: 'MISSING_TERMINAL_SCREEN', error_type: 'FLOW_JSON_ERROR', message: 'At least one screen must be terminal.', line_start: 1, line_end: 1, column_start: 1, column_end: 1 });
  }
  for (const screen of screens) {
    const children: any[] = Array.isArray(screen?.layout?.children) ? screen.layout.children : [];
    const footers = children.filter((c) => c?.type === 'Footer');
    if (screen?.terminal === true && footers.length === 0) {
      errors.push({ error: 'INVALID_PROPERTY_VALUE', error_type: 'FLOW_JSON_ERROR', message: `Terminal screen ${screen.id} must have a Footer.`, pointers: [{ path: `screens/${screen.id}` }] });
    }
  }
  return errors;
}

/** Encrypts a request with a public key exactly as the platform does: `{ body, aesKey, iv }`. */
export function platformEncrypt(payload: unknown, publicKeyPem: string) {
  const aesKey = randomBytes(16);
  const iv = randomBytes(16);
  const cipher = createCipheriv('aes-128-gcm', aesKey, iv);
  const data = Buffer.concat([cipher.update(JSON.stringify(payload), 'utf8'), cipher.final(), cipher.getAuthTag()]);
  const wrapped = publicEncrypt({ key: publicKeyPem, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, aesKey);
  const body = { encrypted_flow_data: data.toString('base64'), encrypted_aes_key: wrapped.toString('base64'), initial_vector: iv.toString('base64') };
  return { body, aesKey, iv };
}

/** Decrypts an answer as the platform does: AES-128-GCM with the request's key and the IV with every byte flipped. */
export function platformDecrypt(answer: string, aesKey: Buffer, iv: Buffer): unknown {
  const bytes = Buffer.from(answer, 'base64');
  const flipped = Buffer.from(iv.map((b) => b ^ 0xff));
  const decipher = createDecipheriv('aes-128-gcm', aesKey, flipped);
  decipher.setAuthTag(bytes.subarray(bytes.length - 16));
  return JSON.parse(Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]).toString('utf8'));
}

/** The platform calling a Flow data endpoint, with the number's registered key and the app secret. */
export function flowPlatform(sim: GraphSimulator, keys: { publicKeys: Map<string, string> }) {
  return {
    /** POSTs an encrypted, signed request to the endpoint; `answer` is the decrypted reply on a 200. */
    async call(endpointUrl: string, payload: unknown, options: { publicKeyPem?: string; appSecret?: string } = {}) {
      const publicKeyPem = options.publicKeyPem ?? keys.publicKeys.get(sim.phoneNumberId);
      if (!publicKeyPem) throw new Error('no public key registered for the number');
      const { body, aesKey, iv } = platformEncrypt(payload, publicKeyPem);
      const raw = JSON.stringify(body);
      const signature = `sha256=${createHmac('sha256', options.appSecret ?? sim.appSecret).update(raw).digest('hex')}`;
      const response = await fetch(endpointUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature }, body: raw });
      const text = await response.text();
      return { status: response.status, contentType: response.headers.get('content-type'), text, answer: response.status === 200 ? platformDecrypt(text, aesKey, iv) : undefined };
    },
  };
}

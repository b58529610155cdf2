import { afterAll, beforeAll } from 'bun:test';
import { createHash, createHmac, randomBytes, randomInt } from 'node:crypto';

/**
 * A local stand-in for the network's business Cloud API (Graph API), answering like the real
 * one so the `cloud-api` driver is tested for real (ARCHITECTURE.md, "Network drivers"):
 *
 * - `GET  /{version}/{phone-number-id}`             the number (`display_phone_number`, `verified_name`); a token
 *                                                   that does not own the number gets 100 (GraphMethodException)
 * - `POST /{version}/{phone-number-id}/messages`    validated sends → `{ messaging_product, contacts, messages: [{ id }] }`,
 *                                                   and `status: read` (+ `typing_indicator`) → `{ success: true }`
 * - `POST /{version}/{phone-number-id}/media`       multipart upload (file, type, messaging_product) → `{ id }`
 * - `GET  /{version}/{media-id}`                    `{ messaging_product, url, mime_type, sha256, file_size, id }`
 * - `GET  /media-bytes/{media-id}`                  the bytes, bearer required (the real URL is a lookaside host)
 *
 * Every Graph call needs `Authorization: Bearer <accessToken>`, else 401 with code 190
 * (`OAuthException`). Errors use the documented body
 * `{ error: { message, type, code, error_subcode, error_data: { messaging_product, details }, fbtrace_id } }`.
 *
 * Callbacks go out like the platform's: a signed `whatsapp_business_account` payload
 * (`x-hub-signature-256: sha256=<hex HMAC-SHA256(app secret, raw body)>`).
 */
export interface GraphSimulatorOptions {
  phoneNumberId?: string;
  businessAccountId?: string;
  accessToken?: string;
  appSecret?: string;
  verifyToken?: string;
  displayPhoneNumber?: string;
  verifiedName?: string;
  /** Where asynchronous statuses (`sent`, `delivered`, `read`; the 131047 failure of a send outside the window) are posted. */
  callbackUrl?: string;
  /** The status callbacks each accepted send brings (default: all three, 5 ms apart); see `StatusCallbacks`. */
  statusCallbacks?: Partial<StatusCallbacks>;
  /** How long a send is held after the platform took it, before the answer goes back (default 0). */
  sendLatencyMs?: number;
}

/**
 * As on the real platform, an accepted send is followed by signed `statuses` callbacks: `sent`,
 * then `delivered`, then `read` (the contact opened it), each `delayMs` after the one before.
 * `upTo` stops the chain early (`none`: no callbacks at all, as for a phone that never comes
 * online: `sent` only; a contact that never opens it: up to `delivered`).
 *
 * Without `retry`, a callback the service does not take (it is down) is missed: tests post it
 * again themselves. With `retry`, it is posted again as the platform does (the Cloud API retries
 * an undelivered webhook with backoff for days): every `everyMs`, to the callback URL registered
 * at that moment, until the service answers 200, `forMs` have passed, or the simulator stops.
 * The next status of the chain waits for it.
 */
export interface StatusCallbacks {
  upTo: 'none' | 'sent' | 'delivered' | 'read';
  delayMs: number;
  retry?: { everyMs: number; forMs: number };
}

const STATUS_CHAIN = ['sent', 'delivered', 'read'] as const;

export interface GraphExtension {
  handle(request: Request, parts: string[], url: URL): Promise<Response | undefined>;
}

export interface SentMessage {
  id: string;
  waId: string;
  body: Record<string, any>;
}

/** A status callback the simulator posted on its own (after a send), with what the service answered. */
export interface PostedStatus {
  id: string;
  status: string;
  bizOpaque?: string;
  /** The service's last answer (0: not reached). */
  answer?: number;
  /** Times it was posted, when more than once (with `retry`); absent when once. */
  attempts?: number;
}

export interface StoredMedia {
  id: string;
  bytes: Uint8Array;
  mimeType: string;
  sha256: string;
  fileName?: string;
}

/** A message as the contact sends it: the Cloud API message fields, `type` naming its object. */
export interface IncomingInput {
  from: string;
  /** Profile name in `contacts[].profile.name`. */
  name?: string;
  id?: string;
  timestamp?: number;
  type: string;
  /** `{ from, id }` for a reply; `{ forwarded: true }` for a forwarded message. */
  context?: { id?: string; from?: string; forwarded?: boolean; frequently_forwarded?: boolean };
  /** Sends the callback as if for another business number. */
  phoneNumberId?: string;
  /** A media object may hold `bytes`: they are stored and replaced by `{ id, mime_type, sha256 }`. */
  [object: string]: unknown;
}

export interface CallbackAnswer {
  status: number;
  body: string;
}

const ERROR_TITLES: Record<number, { title: string; details: string }> = {
  131047: {
    title: 'Re-engagement message',
    details: 'Message failed to send because more than 24 hours have passed since the customer last replied to this number.',
  },
  131026: { title: 'Message undeliverable', details: 'Message failed to send because the recipient cannot receive it.' },
  130429: { title: 'Rate limit hit', details: 'Message failed to send because there were too many messages sent from this phone number in a short period of time' },
  131056: {
    title: '(Business Account, Consumer Account) pair rate limit hit',
    details: 'Message failed to send because there were too many messages sent from this phone number to the same phone number in a short period of time.',
  },
};

interface StatusInput {
  messageId: string;
  status: string;
  recipientId?: string;
  error?: number;
  errors?: unknown[];
  /** `biz_opaque_callback_data` to carry instead of the send's own. */
  bizOpaque?: string;
}

export type GraphSimulator = Awaited<ReturnType<typeof startGraphSimulator>>;

/**
 * The Graph API simulator of a test file: started before its tests (register it before the
 * service, whose options read its URL), stopped after them. Answers it at once, as a stand-in
 * that reaches the running simulator from the hooks and tests that run after the start.
 */
export function useGraphSimulator(options: GraphSimulatorOptions = {}): GraphSimulator {
  let started: GraphSimulator | undefined;
  const running = (): GraphSimulator => {
    if (!started) throw new Error('the Graph simulator is used before its beforeAll hook ran (or after it stopped)');
    return started;
  };
  beforeAll(async () => {
    started = await startGraphSimulator(options);
  }, 60_000);
  afterAll(async () => {
    await started?.stop();
    started = undefined;
  }, 60_000);
  return new Proxy({} as GraphSimulator, {
    get: (_, key) => Reflect.get(running(), key),
    set: (_, key, value) => Reflect.set(running(), key, value),
  });
}

export async function startGraphSimulator(options: GraphSimulatorOptions = {}) {
  const phoneNumberId = options.phoneNumberId ?? graphId();
  const businessAccountId = options.businessAccountId ?? graphId();
  const accessToken = options.accessToken ?? `EAAG${randomBytes(24).toString('hex')}`;
  const appSecret = options.appSecret ?? randomBytes(16).toString('hex');
  const verifyToken = options.verifyToken ?? `verify-${randomBytes(8).toString('hex')}`;
  const displayPhoneNumber = options.displayPhoneNumber ?? '+1 555-010-4477';
  const verifiedName = options.verifiedName ?? 'Switchboard Test Business';

  const sent: SentMessage[] = [];
  const marks: Array<Record<string, any>> = [];
  const media = new Map<string, StoredMedia>();
  const log: string[] = [];
  const closedWindows = new Set<string>();
  const pending = new Set<Promise<unknown>>();
  const statuses: PostedStatus[] = [];
  const sentById = new Map<string, SentMessage>();
  /** One conversation per contact, as the platform opens one per 24-hour window. */
  const conversations = new Map<string, { id: string; expires: number }>();
  let throttle = { remaining: 0, code: 130429, httpStatus: 429 };
  let outage = 0;
  /** Set by `stop()`: callbacks are no longer posted again. */
  let stopping = false;
  let baseUrl = '';
  /** Tokens of other businesses → the one phone number id each may read (see `addBusiness`). */
  const otherBusinesses = new Map<string, string>();
  /** Graph features taught to the simulator by other modules (templates, Flows…), asked in order. */
  const extensions: GraphExtension[] = [];

  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (request) => handle(request) });
  baseUrl = `http://127.0.0.1:${server.port}`;

  const sim = {
    baseUrl,
    phoneNumberId,
    businessAccountId,
    accessToken,
    appSecret,
    verifyToken,
    displayPhoneNumber,
    verifiedName,
    callbackUrl: options.callbackUrl,
    /** The status callbacks that follow each accepted send; change it at any time (sends after see it). */
    statusCallbacks: { upTo: 'read', delayMs: 5, ...options.statusCallbacks } as StatusCallbacks,
    sendLatencyMs: options.sendLatencyMs ?? 0,
    /** Accepted message sends, in order. */
    sent,
    /** Status callbacks posted on the simulator's own after sends, in order. */
    statuses,
    /** Accepted sends per `biz_opaque_callback_data` (the service's message id): more than 1 is a duplicate. */
    sendsByOpaque(): Map<string, number> {
      const counts = new Map<string, number>();
      for (const m of sent) {
        const key = m.body.biz_opaque_callback_data;
        if (typeof key === 'string') counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      return counts;
    },
    /** `status: read` calls (mark as read, typing indicator). */
    marks,
    media,
    /** `METHOD /path` of every request, in order. */
    log,
    /**
     * Teaches the simulator more of the Graph API: `handle` sees every authorized versioned
     * request (`parts` = path segments after the version) and answers it, or returns undefined.
     */
    extend(extension: GraphExtension) {
      extensions.push(extension);
    },
    graphError: (status: number, code: number, message: string) => graphError(status, code, message),
    /** From now on, non-template sends to this contact are accepted, then fail with 131047. */
    closeWindowFor(waId: string) {
      closedWindows.add(digits(waId));
    },
    openWindowFor(waId: string) {
      closedWindows.delete(digits(waId));
    },
    /** The next `n` sends are refused as throttled (130429 with HTTP 429 unless told otherwise). */
    throttleNext(n: number, how: { code?: number; httpStatus?: number } = {}) {
      throttle = { remaining: n, code: how.code ?? 130429, httpStatus: how.httpStatus ?? (how.code === 131056 ? 400 : 429) };
    },
    /**
     * Another business on the platform: its token reads its own number (`GET /{phone-number-id}`)
     * and nothing else, as a system-user token of another WhatsApp Business Account. Give an
     * existing `phoneNumberId` for a second (rotated) token of the same number.
     */
    addBusiness(given: { phoneNumberId?: string; accessToken?: string } = {}) {
      const business = { phoneNumberId: given.phoneNumberId ?? graphId(), businessAccountId: graphId(), accessToken: given.accessToken ?? `EAAG${randomBytes(24).toString('hex')}` };
      otherBusinesses.set(business.accessToken, business.phoneNumberId);
      return business;
    },
    /** The next `n` versioned requests of any kind answer 503 (code 2, temporary downtime). */
    outageNext(n: number) {
      outage = n;
    },
    /** Stores media as if a contact had sent it; returns its media id. */
    addMedia(bytes: Uint8Array, mimeType: string, fileName?: string): string {
      return storeMedia(bytes, mimeType, fileName).id;
    },
    /** The webhook payload of one `messages` change, its raw body and its headers as the platform signs them. */
    webhook(value: Record<string, unknown>, numberId = phoneNumberId) {
      const payload = {
        object: 'whatsapp_business_account',
        entry: [
          {
            id: businessAccountId,
            changes: [{ value: { messaging_product: 'whatsapp', metadata: { display_phone_number: digits(displayPhoneNumber), phone_number_id: numberId }, ...value }, field: 'messages' }],
          },
        ],
      };
      const rawBody = JSON.stringify(payload);
      return { payload, rawBody, headers: signedHeaders(rawBody) };
    },
    /** The message object and webhook of an incoming message (media bytes stored first). */
    incoming(input: IncomingInput) {
      const { from, name, id, timestamp, type, context, phoneNumberId: numberId, ...objects } = input;
      const message: Record<string, unknown> = { from, id: id ?? messageId(), timestamp: String(timestamp ?? Math.floor(Date.now() / 1000)), type };
      if (context) message.context = context;
      for (const [key, object] of Object.entries(objects)) message[key] = withStoredMedia(object);
      if (type === 'unsupported' && !message.errors) {
        message.errors = [{ code: 131051, title: 'Message type unknown', message: 'Message type unknown', error_data: { details: 'Message type is currently not supported.' } }];
      }
      const value = { contacts: [{ profile: { name: name ?? 'Test Contact' }, wa_id: from }], messages: [message] };
      return { message, ...sim.webhook(value, numberId ?? phoneNumberId) };
    },
    /** POSTs a signed incoming message to a callback URL, as the platform does. */
    async deliverIncoming(callbackUrl: string, input: IncomingInput) {
      const built = sim.incoming(input);
      return { ...(await post(callbackUrl, built.rawBody)), messageId: built.message.id as string, payload: built.payload, rawBody: built.rawBody };
    },
    /**
     * POSTs a signed status (`sent`, `delivered`, `read`, `failed` with errors) to a callback URL.
     * It carries the send's `biz_opaque_callback_data` as the platform does (or `bizOpaque` when given).
     */
    async deliverStatus(callbackUrl: string, input: StatusInput) {
      const built = sim.webhook({ statuses: [statusObject(input)] });
      return { ...(await post(callbackUrl, built.rawBody)), payload: built.payload, rawBody: built.rawBody };
    },
    /** The platform's `GET` verification of a callback URL; `ok` when the challenge came back. */
    async verifyCallback(callbackUrl: string, token = verifyToken) {
      const challenge = String(randomInt(1_000_000, 9_999_999));
      const url = new URL(callbackUrl);
      url.searchParams.set('hub.mode', 'subscribe');
      url.searchParams.set('hub.challenge', challenge);
      url.searchParams.set('hub.verify_token', token);
      const response = await fetch(url);
      const body = await response.text();
      return { status: response.status, body, ok: response.status === 200 && body === challenge };
    },
    /** Waits for the asynchronous callbacks still on their way. */
    async settle() {
      while (pending.size > 0) await Promise.allSettled([...pending]);
    },
    async stop() {
      stopping = true;
      await sim.settle();
      server.stop(true);
    },
  };

  function signedHeaders(rawBody: string): Record<string, string> {
    return {
      'content-type': 'application/json',
      'x-hub-signature-256': `sha256=${createHmac('sha256', appSecret).update(rawBody).digest('hex')}`,
      'x-hub-signature': `sha1=${createHmac('sha1', appSecret).update(rawBody).digest('hex')}`,
    };
  }

  async function post(callbackUrl: string, rawBody: string): Promise<CallbackAnswer> {
    const response = await fetch(callbackUrl, { method: 'POST', headers: signedHeaders(rawBody), body: rawBody });
    return { status: response.status, body: await response.text() };
  }

  function statusObject(input: StatusInput) {
    const send = sentById.get(input.messageId);
    const recipient = input.recipientId ?? send?.waId ?? '';
    const now = Math.floor(Date.now() / 1000);
    const status: Record<string, unknown> = { id: input.messageId, status: input.status, timestamp: String(now), recipient_id: recipient };
    // `sent` and `delivered` tell the conversation the message opened or belongs to and its price.
    if (input.status === 'sent' || input.status === 'delivered') {
      const category = send?.body.type === 'template' ? 'utility' : 'service';
      const conversation = conversationOf(recipient, now);
      status.conversation = { id: conversation.id, ...(input.status === 'sent' && { expiration_timestamp: String(conversation.expires) }), origin: { type: category } };
      status.pricing = { billable: true, pricing_model: 'PMP', category };
    }
    const opaque = input.bizOpaque ?? send?.body.biz_opaque_callback_data;
    if (typeof opaque === 'string') status.biz_opaque_callback_data = opaque;
    const errors = input.errors ?? (input.error !== undefined ? [errorEntry(input.error)] : undefined);
    if (errors) status.errors = errors;
    return status;
  }

  function conversationOf(recipient: string, now: number) {
    const known = conversations.get(recipient);
    if (known && known.expires > now) return known;
    const opened = { id: randomBytes(16).toString('hex'), expires: now + 24 * 3600 };
    conversations.set(recipient, opened);
    return opened;
  }

  /** Posts in the background, tracked so `settle()` can wait for it. */
  function later(work: () => Promise<unknown>): void {
    const delivery = work();
    pending.add(delivery);
    delivery.catch(() => {}).finally(() => pending.delete(delivery));
  }

  /** `sent`, `delivered`, `read` after an accepted send, one after another (see `StatusCallbacks`). */
  function followWithStatuses(callbackUrl: string, id: string): void {
    const { upTo, delayMs } = sim.statusCallbacks;
    if (upTo === 'none') return;
    const chain = STATUS_CHAIN.slice(0, STATUS_CHAIN.indexOf(upTo) + 1);
    later(async () => {
      for (const status of chain) {
        await Bun.sleep(delayMs);
        const posted: PostedStatus = { id, status };
        const opaque = sentById.get(id)?.body.biz_opaque_callback_data;
        if (typeof opaque === 'string') posted.bizOpaque = opaque;
        statuses.push(posted);
        const post = () => sim.deliverStatus(sim.statusCallbacks.retry ? (sim.callbackUrl ?? callbackUrl) : callbackUrl, { messageId: id, status }).then((a) => a.status, () => 0);
        posted.answer = await post();
        // A service that is down misses the callback, unless it is posted again (see `StatusCallbacks`).
        const retry = sim.statusCallbacks.retry;
        const until = Date.now() + (retry?.forMs ?? 0);
        while (retry && posted.answer !== 200 && !stopping && Date.now() < until) {
          await Bun.sleep(retry.everyMs);
          posted.answer = await post();
          posted.attempts = (posted.attempts ?? 1) + 1;
        }
      }
    });
  }

  function errorEntry(code: number) {
    const known = ERROR_TITLES[code] ?? { title: 'Message failed', details: 'Message failed to send.' };
    return { code, title: known.title, message: known.title, error_data: { details: known.details }, href: 'https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes/' };
  }

  function withStoredMedia(object: unknown): unknown {
    if (typeof object !== 'object' || object === null || !((object as any).bytes instanceof Uint8Array)) return object;
    const { bytes, mime_type, filename, ...rest } = object as { bytes: Uint8Array; mime_type?: string; filename?: string };
    const stored = storeMedia(bytes, mime_type ?? 'application/octet-stream', filename);
    return { ...rest, ...(filename ? { filename } : {}), mime_type: stored.mimeType, sha256: stored.sha256, id: stored.id };
  }

  function storeMedia(bytes: Uint8Array, mimeType: string, fileName?: string): StoredMedia {
    const id = graphId();
    const stored: StoredMedia = { id, bytes, mimeType, sha256: createHash('sha256').update(bytes).digest('hex'), ...(fileName ? { fileName } : {}) };
    media.set(id, stored);
    return stored;
  }

  async function handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    log.push(`${request.method} ${url.pathname}`);
    const parts = url.pathname.split('/').filter(Boolean);
    const authorized = request.headers.get('authorization') === `Bearer ${accessToken}`;

    if (parts[0] === 'media-bytes' && parts.length === 2 && request.method === 'GET') {
      if (!authorized) return invalidToken();
      const stored = media.get(parts[1]!);
      if (!stored) return new Response('Not Found', { status: 404 });
      return new Response(stored.bytes as Uint8Array<ArrayBuffer>, { headers: { 'content-type': stored.mimeType } });
    }
    if (!/^v\d+\.\d+$/.test(parts[0] ?? '')) return graphError(400, 2500, `Unknown path components: ${url.pathname}`);
    if (!request.headers.get('authorization')) return graphError(400, 2500, 'An active access token must be used to query information about the current user.');
    if (outage > 0) {
      outage -= 1;
      return graphError(503, 2, 'Service temporarily unavailable', { type: 'OAuthException' });
    }
    const otherNumber = otherBusinesses.get(request.headers.get('authorization')!.replace(/^Bearer /, ''));
    if (otherNumber !== undefined) {
      if (parts.length === 2 && request.method === 'GET' && parts[1] === otherNumber) return phoneNumberNode(url.searchParams.get('fields'), otherNumber);
      return unsupported(request.method === 'GET' ? 'get' : 'post', parts[1] ?? '');
    }
    if (!authorized) return invalidToken();

    for (const extension of extensions) {
      const answer = await extension.handle(request, parts.slice(1), url);
      if (answer) return answer;
    }
    const [, nodeId, edge] = parts;
    if (parts.length === 2 && request.method === 'GET') {
      if (nodeId === phoneNumberId) return phoneNumberNode(url.searchParams.get('fields'));
      const stored = media.get(nodeId!);
      const ownerCheck = url.searchParams.get('phone_number_id');
      if (stored && (!ownerCheck || ownerCheck === phoneNumberId)) {
        return Response.json({ messaging_product: 'whatsapp', url: `${baseUrl}/media-bytes/${stored.id}`, mime_type: stored.mimeType, sha256: stored.sha256, file_size: stored.bytes.byteLength, id: stored.id });
      }
      return unsupported('get', nodeId!);
    }
    if (parts.length === 3 && request.method === 'POST' && (edge === 'messages' || edge === 'media')) {
      if (nodeId !== phoneNumberId) return unsupported('post', nodeId!);
      return edge === 'messages' ? messages(request) : upload(request);
    }
    return graphError(400, 2500, `Unknown path components: /${parts.slice(1).join('/')}`);
  }

  function phoneNumberNode(fields: string | null, id = phoneNumberId): Response {
    const all: Record<string, unknown> = {
      verified_name: verifiedName,
      code_verification_status: 'VERIFIED',
      display_phone_number: displayPhoneNumber,
      quality_rating: 'GREEN',
      platform_type: 'CLOUD_API',
      throughput: { level: 'STANDARD' },
    };
    const wanted = fields ? fields.split(',').map((f) => f.trim()) : Object.keys(all);
    const node: Record<string, unknown> = {};
    for (const field of wanted) if (field in all) node[field] = all[field];
    return Response.json({ ...node, id });
  }

  async function messages(request: Request): Promise<Response> {
    let body: Record<string, any>;
    try {
      body = (await request.json()) as Record<string, any>;
    } catch {
      return invalidParameter('The request body must be JSON.');
    }
    if (body.messaging_product !== 'whatsapp') {
      return invalidParameter(body.messaging_product === undefined ? 'The parameter messaging_product is required.' : 'Param messaging_product must be one of {WHATSAPP}.');
    }
    if (body.status !== undefined) {
      if (body.status !== 'read') return invalidParameter('Param status must be one of {READ}.');
      if (typeof body.message_id !== 'string' || !body.message_id) return invalidParameter('The parameter message_id is required.');
      if (body.typing_indicator !== undefined && body.typing_indicator?.type !== 'text') return invalidParameter("Param typing_indicator['type'] must be one of {TEXT}.");
      marks.push(body);
      return Response.json({ success: true });
    }
    if (throttle.remaining > 0) {
      throttle.remaining -= 1;
      const known = ERROR_TITLES[throttle.code]!;
      return graphError(throttle.httpStatus, throttle.code, `(#${throttle.code}) ${known.title}`, { details: known.details, subcode: 2494055 });
    }
    const problem = validateMessage(body, media);
    if (problem) return invalidParameter(problem);
    const waId = digits(body.to);
    const id = messageId();
    const accepted = { id, waId, body };
    sent.push(accepted);
    sentById.set(id, accepted);
    if (closedWindows.has(waId) && body.type !== 'template' && sim.callbackUrl) {
      // As on the real platform, the send is accepted and the 131047 failure arrives as a status callback.
      const callbackUrl = sim.callbackUrl;
      later(() => Bun.sleep(5).then(() => sim.deliverStatus(callbackUrl, { messageId: id, status: 'failed', error: 131047 })));
    } else if (sim.callbackUrl) {
      followWithStatuses(sim.callbackUrl, id);
    }
    // Taken, and then the answer is slow (or lost: the caller may be gone before it comes).
    if (sim.sendLatencyMs > 0) await Bun.sleep(sim.sendLatencyMs);
    return Response.json({
      messaging_product: 'whatsapp',
      contacts: [{ input: body.to, wa_id: waId }],
      messages: [body.type === 'template' ? { id, message_status: 'accepted' } : { id }],
    });
  }

  async function upload(request: Request): Promise<Response> {
    let form: FormData;
    try {
      form = await request.formData();
    } catch {
      return invalidParameter('The request must be multipart/form-data.');
    }
    if (form.get('messaging_product') !== 'whatsapp') return invalidParameter('The parameter messaging_product is required.');
    const file = form.get('file');
    if (!(file instanceof Blob)) return invalidParameter('The parameter file is required.');
    const type = (typeof form.get('type') === 'string' ? (form.get('type') as string) : '') || file.type;
    if (!/^[a-z]+\/[a-z0-9.+-]+/i.test(type)) return invalidParameter('The parameter type is required.');
    const stored = storeMedia(new Uint8Array(await file.arrayBuffer()), type, file instanceof File ? file.name : undefined);
    return Response.json({ id: stored.id });
  }

  return sim;
}

/** The first thing the real API would refuse in a message body, or undefined. */
function validateMessage(body: Record<string, any>, media: Map<string, StoredMedia>): string | undefined {
  if (typeof body.to !== 'string' || !body.to) return 'The parameter to is required.';
  if (!/^\d{7,15}$/.test(digits(body.to))) return 'Param to must be a valid phone number.';
  if (body.recipient_type !== undefined && body.recipient_type !== 'individual') return 'Param recipient_type must be one of {INDIVIDUAL, GROUP}.';
  if (body.context !== undefined && (typeof body.context?.message_id !== 'string' || !body.context.message_id)) return "The parameter context['message_id'] is required.";
  const type = body.type ?? 'text';
  const object = body[type];
  if (!['text', 'image', 'video', 'audio', 'document', 'sticker', 'location', 'contacts', 'interactive', 'template', 'reaction'].includes(type)) {
    return 'Param type must be one of {AUDIO, CONTACTS, DOCUMENT, IMAGE, INTERACTIVE, LOCATION, REACTION, STICKER, TEMPLATE, TEXT, VIDEO}.';
  }
  if (object === undefined || object === null) return `The parameter ${type} is required.`;
  switch (type) {
    case 'text':
      if (typeof object.body !== 'string' || !object.body) return "The parameter text['body'] is required.";
      if (object.body.length > 4096) return "Param text['body'] must be at most 4096 characters long.";
      if (object.preview_url !== undefined && typeof object.preview_url !== 'boolean') return "Param text['preview_url'] must be a boolean.";
      return undefined;
    case 'image':
    case 'video':
    case 'audio':
    case 'document':
    case 'sticker': {
      const sources = ['id', 'link'].filter((key) => object[key] !== undefined);
      if (sources.length !== 1) return `Param ${type} must have exactly one of ${type}['id'] or ${type}['link'].`;
      if (object.id !== undefined && !media.has(object.id)) return `Param ${type}['id'] is not a valid media id.`;
      if (object.link !== undefined && !/^https?:\/\//.test(object.link)) return `Param ${type}['link'] must be a valid URL.`;
      if (object.caption !== undefined && (type === 'audio' || type === 'sticker')) return `Param ${type}['caption'] is not supported.`;
      if (object.voice !== undefined && type !== 'audio') return `Param ${type}['voice'] is not supported.`;
      if (typeof object.caption === 'string' && object.caption.length > 1024) return `Param ${type}['caption'] must be at most 1024 characters long.`;
      return undefined;
    }
    case 'location':
      if (!isCoordinate(object.latitude, 90)) return "The parameter location['latitude'] is required.";
      if (!isCoordinate(object.longitude, 180)) return "The parameter location['longitude'] is required.";
      return undefined;
    case 'contacts':
      if (!Array.isArray(object) || object.length === 0) return 'The parameter contacts is required.';
      for (const [i, card] of object.entries()) {
        const name = card?.name ?? {};
        if (typeof name.formatted_name !== 'string' || !name.formatted_name) return `The parameter contacts[${i}]['name']['formatted_name'] is required.`;
        if (!['first_name', 'last_name', 'middle_name', 'suffix', 'prefix'].some((k) => typeof name[k] === 'string' && name[k])) {
          return `Param contacts[${i}]['name'] requires at least one of first_name, last_name, middle_name, suffix, prefix.`;
        }
        if (card.phones !== undefined && (!Array.isArray(card.phones) || card.phones.some((p: any) => typeof p?.phone !== 'string'))) return `Param contacts[${i}]['phones'] is invalid.`;
      }
      return undefined;
    case 'interactive':
      return validateInteractive(object);
    case 'template':
      if (typeof object.name !== 'string' || !object.name) return "The parameter template['name'] is required.";
      if (typeof object.language?.code !== 'string' || !object.language.code) return "The parameter template['language']['code'] is required.";
      if (object.components !== undefined && (!Array.isArray(object.components) || object.components.some((c: any) => typeof c?.type !== 'string'))) {
        return "Param template['components'] must be an array of components with a type.";
      }
      return undefined;
    case 'reaction':
      if (typeof object.message_id !== 'string' || !object.message_id) return "The parameter reaction['message_id'] is required.";
      if (typeof object.emoji !== 'string') return "The parameter reaction['emoji'] is required.";
      return undefined;
  }
  return undefined;
}

function validateInteractive(object: Record<string, any>): string | undefined {
  if (typeof object.type !== 'string') return "The parameter interactive['type'] is required.";
  const header = object.header;
  if (header?.type === 'text' && (typeof header.text !== 'string' || !header.text || header.text.length > 60)) {
    return "Param interactive['header']['text'] must be 1 to 60 characters long.";
  }
  if (object.footer !== undefined && (typeof object.footer.text !== 'string' || object.footer.text.length > 60)) return "Param interactive['footer']['text'] must be at most 60 characters long.";
  if (['button', 'list', 'flow', 'cta_url'].includes(object.type) && (typeof object.body?.text !== 'string' || !object.body.text)) {
    return "The parameter interactive['body']['text'] is required.";
  }
  const action = object.action;
  if (action === undefined || action === null) return "The parameter interactive['action'] is required.";
  if (object.type === 'button') {
    const buttons = action.buttons;
    if (!Array.isArray(buttons) || buttons.length < 1 || buttons.length > 3) return "Param interactive['action']['buttons'] must have 1 to 3 buttons.";
    for (const [i, button] of buttons.entries()) {
      if (button?.type !== 'reply') return `Param interactive['action']['buttons'][${i}]['type'] must be one of {REPLY}.`;
      if (typeof button.reply?.id !== 'string' || !button.reply.id) return `The parameter interactive['action']['buttons'][${i}]['reply']['id'] is required.`;
      if (typeof button.reply?.title !== 'string' || !button.reply.title || button.reply.title.length > 20) {
        return `Param interactive['action']['buttons'][${i}]['reply']['title'] must be 1 to 20 characters long.`;
      }
    }
    if (new Set(buttons.map((b: any) => b.reply.id)).size !== buttons.length) return 'Buttons must have unique ids.';
  }
  if (object.type === 'list') {
    if (typeof action.button !== 'string' || !action.button || action.button.length > 20) return "Param interactive['action']['button'] must be 1 to 20 characters long.";
    const sections = action.sections;
    if (!Array.isArray(sections) || sections.length < 1 || sections.length > 10) return "Param interactive['action']['sections'] must have 1 to 10 sections.";
    const rows = sections.flatMap((s: any) => (Array.isArray(s?.rows) ? s.rows : []));
    if (rows.length < 1 || rows.length > 10) return "Param interactive['action']['sections'] must have 1 to 10 rows in all.";
    if (sections.length > 1 && sections.some((s: any) => typeof s.title !== 'string' || !s.title)) return "The parameter interactive['action']['sections'][]['title'] is required when there are several sections.";
    for (const row of rows) {
      if (typeof row?.id !== 'string' || !row.id) return "The parameter interactive['action']['sections'][]['rows'][]['id'] is required.";
      if (typeof row.title !== 'string' || !row.title || row.title.length > 24) return "Param interactive['action']['sections'][]['rows'][]['title'] must be 1 to 24 characters long.";
      if (row.description !== undefined && (typeof row.description !== 'string' || row.description.length > 72)) return "Param interactive['action']['sections'][]['rows'][]['description'] must be at most 72 characters long.";
    }
    if (new Set(rows.map((r: any) => r.id)).size !== rows.length) return 'Rows must have unique ids.';
  }
  if (object.type === 'flow' && (action.name !== 'flow' || typeof action.parameters !== 'object')) return "Param interactive['action'] of a flow needs name 'flow' and parameters.";
  return undefined;
}

function isCoordinate(value: unknown, limit: number): boolean {
  const number = typeof value === 'string' ? Number(value) : value;
  return typeof number === 'number' && Number.isFinite(number) && Math.abs(number) <= limit;
}

/** A Graph object id: 15 digits. */
function graphId(): string {
  return `${randomInt(1, 10)}${String(randomInt(0, 100_000_000_000_000)).padStart(14, '0')}`;
}

function digits(value: string): string {
  return String(value).replace(/[^\d]/g, '');
}

function messageId(): string {
  return `wamid.${randomBytes(30).toString('base64')}`;
}

function fbtrace(): string {
  return randomBytes(12).toString('base64url');
}

function graphError(status: number, code: number, message: string, more: { type?: string; subcode?: number; details?: string } = {}): Response {
  const error: Record<string, unknown> = { message, type: more.type ?? 'OAuthException', code };
  if (more.details) error.error_data = { messaging_product: 'whatsapp', details: more.details };
  if (more.subcode !== undefined) error.error_subcode = more.subcode;
  error.fbtrace_id = fbtrace();
  const headers: Record<string, string> = status === 401 ? { 'www-authenticate': 'OAuth "Facebook Platform" "invalid_token" "Invalid OAuth access token - Cannot parse access token"' } : {};
  return Response.json({ error }, { status, headers });
}

function invalidToken(): Response {
  return graphError(401, 190, 'Invalid OAuth access token - Cannot parse access token');
}

function invalidParameter(problem: string): Response {
  return graphError(400, 100, `(#100) ${problem}`, { details: problem });
}

function unsupported(method: 'get' | 'post', id: string): Response {
  return graphError(
    400,
    100,
    `Unsupported ${method} request. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation. Please read the Graph API documentation at https://developers.facebook.com/docs/graph-api`,
    { type: 'GraphMethodException', subcode: 33 },
  );
}

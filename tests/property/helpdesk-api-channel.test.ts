import { describe, expect, test } from 'bun:test';
import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { authenticateInbound, MAX_SOURCE_ID_LENGTH, parseInbound, signApiChannelBody } from '../../core/helpdesk/api-channel/inbound.ts';
import { apiChannelBody, settleApiAttempt, sourceIdOfAnswer } from '../../core/helpdesk/api-channel/outbound.ts';
import { applyDeliveryOutcome, DELIVERY_OUTCOMES, type DeliveryOutcomeStatus, type MessageDeliveryState, type MessageStatus } from '../../core/helpdesk/conversations/message-status.ts';
import type { AttemptOutcome, DeliveryProgress } from '../../core/webhooks/delivery.ts';
import { DomainError, type DomainErrorKind } from '../../core/shared/errors.ts';

/**
 * The API channel's rules, checked against models written from the spec, not from the code.
 *
 * Spec 5.6: "`x-helpdesk-token` or `x-helpdesk-signature`; with `channelConfig.hmacMandatory:
 * true` one of them is required; when false or omitted a request with neither is accepted; a
 * credential that is present but invalid is always rejected".
 * Spec 6.6 + 6.5: the reply is POSTed; retries "3 attempts, exponential backoff from 5 seconds,
 * 10-second timeout"; the endpoint "may answer `{ sourceId: <own id> }`, which the service
 * remembers". Spec 3.2: PENDING → SENT, DELIVERED, READ or FAILED (externalError on FAILED).
 */

// ------------------------------------------------------------------------------------------
// Inbound credentials
// ------------------------------------------------------------------------------------------

type Presented = 'absent' | 'right' | 'wrong';
const hex = (secret: string, raw: Uint8Array) => createHmac('sha256', secret).update(raw).digest('hex');

describe('inbound credentials (spec 5.6)', () => {
  test('accepted exactly when every credential present is right and, if mandatory, one is present', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 60 }),
        fc.uint8Array({ maxLength: 200 }),
        fc.boolean(),
        fc.constantFrom<Presented>('absent', 'right', 'wrong'),
        fc.constantFrom<Presented>('absent', 'right', 'wrong'),
        fc.constantFrom('plain', 'prefixed', 'upper'),
        fc.string({ maxLength: 60 }),
        (secret, raw, hmacMandatory, token, signature, form, noise) => {
          const good = hex(secret, raw);
          const shaped = form === 'plain' ? good : form === 'prefixed' ? `sha256=${good}` : good.toUpperCase();
          const credentials = {
            token: token === 'absent' ? null : token === 'right' ? secret : noise === secret ? `${noise}x` : noise,
            signature: signature === 'absent' ? null : signature === 'right' ? shaped : hex(`${secret}x`, raw),
          };
          const expected = token !== 'wrong' && signature !== 'wrong' && (token === 'right' || signature === 'right' || !hmacMandatory);
          let outcome: DomainErrorKind | 'accepted' = 'accepted';
          try {
            authenticateInbound({ channelType: 'API', inboundSecret: secret, hmacMandatory }, credentials, raw);
          } catch (error) {
            expect(error).toBeInstanceOf(DomainError);
            outcome = (error as DomainError).kind;
          }
          expect(outcome).toBe(expected ? 'accepted' : 'unauthenticated');
        },
      ),
      { numRuns: 2000 },
    );
  });

  test('an unknown or non-API inbox is 404 whatever the credential', () => {
    for (const inbox of [undefined, { channelType: 'CONNECTION' as const, inboundSecret: null, hmacMandatory: false }]) {
      for (const token of [null, 'x']) {
        try {
          authenticateInbound(inbox, { token }, new Uint8Array());
          throw new Error('accepted');
        } catch (error) {
          expect((error as DomainError).kind).toBe('not_found');
        }
      }
    }
  });

  test('the signature is the hex HMAC-SHA256 of the raw bytes keyed with the secret (same in both directions)', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.string(), (secret, body) => {
        expect(signApiChannelBody(secret, body)).toBe(createHmac('sha256', secret).update(body, 'utf8').digest('hex'));
        expect(signApiChannelBody(secret, new TextEncoder().encode(body))).toBe(signApiChannelBody(secret, body));
      }),
    );
  });
});

// ------------------------------------------------------------------------------------------
// Inbound bodies
// ------------------------------------------------------------------------------------------

describe('inbound bodies', () => {
  test('anything JSON can hold is either parsed or refused with 400 listing problems, never another error', () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), fc.record({ sourceId: fc.jsonValue(), content: fc.jsonValue(), sender: fc.jsonValue(), event: fc.jsonValue(), status: fc.jsonValue() }, { requiredKeys: [] })), (body) => {
        try {
          const parsed = parseInbound(body);
          expect(['message', 'status_update']).toContain(parsed.kind);
          expect(parsed.sourceId.length).toBeGreaterThan(0);
          expect(parsed.sourceId.length).toBeLessThanOrEqual(MAX_SOURCE_ID_LENGTH);
        } catch (error) {
          expect(error).toBeInstanceOf(DomainError);
          expect((error as DomainError).kind).toBe('invalid_input');
          expect((error as DomainError).messages?.length ?? 0).toBeGreaterThan(0);
        }
      }),
      { numRuns: 2000 },
    );
  });

  test('a well-formed message and status update parse to their trimmed values', () => {
    const word = fc.string({ minLength: 1, maxLength: 40 }).filter((s) => s.trim().length > 0);
    fc.assert(
      fc.property(word, word, fc.constantFrom('a@b.co', 'Ana.Souza@Shop.Example'), fc.constantFrom<DeliveryOutcomeStatus>(...DELIVERY_OUTCOMES), (sourceId, content, email, status) => {
        expect(parseInbound({ sourceId: ` ${sourceId} `, content, sender: { name: null, email } })).toEqual({
          kind: 'message',
          sourceId: sourceId.trim(),
          content: content.trim(),
          sender: { name: null, email: email.toLowerCase(), identifier: null },
        });
        expect(parseInbound({ event: 'status_update', sourceId, status: status.toLowerCase() })).toEqual({ kind: 'status_update', sourceId: sourceId.trim(), status, error: null });
      }),
    );
  });
});

// ------------------------------------------------------------------------------------------
// One reply's life: delivery attempts and the app's status reports, against a model.
// ------------------------------------------------------------------------------------------

const LADDER: MessageStatus[] = ['PENDING', 'SENT', 'DELIVERED', 'READ'];
const rank = (s: MessageStatus) => LADDER.indexOf(s);

interface Model {
  status: MessageStatus;
  /** Attempts made (the delivery takes at most 3). */
  attempts: number;
  settled: boolean;
  appSourceId: string | null;
  emitted: MessageStatus[];
}

interface Real {
  progress: DeliveryProgress;
  message: MessageDeliveryState;
  appSourceId: string | null;
  emitted: MessageStatus[];
}

/** What the spec says a report does to the reply (forward only; FAILED only before the phone). */
function modelReport(m: Model, to: DeliveryOutcomeStatus): void {
  if (m.status === 'FAILED') return;
  if (to === 'FAILED') {
    if (m.status === 'PENDING' || m.status === 'SENT') {
      m.status = 'FAILED';
      m.emitted.push('FAILED');
    }
    return;
  }
  if (rank(to) > rank(m.status)) {
    m.status = to;
    m.emitted.push(to);
  }
}

const succeeds = (o: AttemptOutcome) => 'status' in o && o.status < 400;

class Attempt implements fc.Command<Model, Real> {
  constructor(
    readonly outcome: AttemptOutcome,
    readonly answer: string | undefined,
  ) {}
  check = () => true;
  run(m: Model, r: Real) {
    if (m.settled) {
      // A settled delivery takes no more attempts (never a 4th POST, never a second success).
      expect(() => settleApiAttempt(r.progress, r.message, this.outcome, this.answer)).toThrow();
      return;
    }
    const result = settleApiAttempt(r.progress, r.message, this.outcome, this.answer);
    m.attempts += 1;
    if (succeeds(this.outcome)) {
      m.settled = true;
      modelReport(m, 'SENT');
      m.appSourceId = sourceIdOfAnswer(this.answer);
      expect(result.retryInSeconds).toBeNull();
    } else if (m.attempts === 3) {
      m.settled = true;
      modelReport(m, 'FAILED');
      expect(result.retryInSeconds).toBeNull();
      if (m.status === 'FAILED' && result.message.changed) expect(result.message.externalError).toContain('status' in this.outcome ? `HTTP ${this.outcome.status}` : this.outcome.error);
    } else {
      // Spec: backoff from 5 seconds, doubling.
      expect(result.retryInSeconds).toBe(m.attempts === 1 ? 5 : 10);
    }
    r.progress = result.progress;
    if (result.message.changed) r.emitted.push(result.message.status);
    r.message = { status: result.message.status, externalError: result.message.externalError };
    if (result.appSourceId !== null) r.appSourceId = result.appSourceId;
    check(m, r);
  }
  toString = () => `attempt(${'status' in this.outcome ? this.outcome.status : this.outcome.error}, ${JSON.stringify(this.answer)})`;
}

class Report implements fc.Command<Model, Real> {
  constructor(readonly status: DeliveryOutcomeStatus) {}
  check = () => true;
  run(m: Model, r: Real) {
    // What the inbound status_update does (receiveApiStatusUpdate applies the same table).
    const change = applyDeliveryOutcome(r.message, { status: this.status, externalError: this.status === 'FAILED' ? 'app said so' : null });
    if (change.changed) r.emitted.push(change.status);
    r.message = { status: change.status, externalError: change.externalError };
    modelReport(m, this.status);
    check(m, r);
  }
  toString = () => `report(${this.status})`;
}

function check(m: Model, r: Real) {
  expect(r.progress.attempts).toBe(m.attempts);
  expect(r.progress.attempts).toBeLessThanOrEqual(3);
  expect(r.progress.state === 'SUCCEEDED' || r.progress.state === 'FAILED').toBe(m.settled);
  expect(r.message.status).toBe(m.status);
  expect(r.message.externalError !== null).toBe(m.status === 'FAILED');
  expect(r.appSourceId).toBe(m.appSourceId);
  expect(r.emitted).toEqual(m.emitted);
}

const outcomeArb: fc.Arbitrary<AttemptOutcome> = fc.oneof(
  fc.constantFrom(200, 201, 204, 302, 400, 404, 429, 500, 503).map((status) => ({ status })),
  fc.constantFrom('timeout after 10000 ms', 'ECONNREFUSED').map((error) => ({ error })),
);
const answerArb = fc.oneof(
  fc.constant(undefined),
  fc.constant(''),
  fc.constantFrom('{"sourceId":"ext-1"}', '{"sourceId":42}', '{"sourceId":""}', '{"sourceId":null}', '[{"sourceId":"x"}]', 'ok', '{"id":"x"}'),
  fc.string({ minLength: 1, maxLength: 30 }).map((id) => JSON.stringify({ sourceId: id })),
);

describe('one reply on an API inbox', () => {
  test('random endpoint behaviours and app reports: ≤ 3 attempts, 5 s then 10 s, SENT on success, FAILED after 3 failures, forward only', () => {
    fc.assert(
      fc.property(
        fc.commands([fc.tuple(outcomeArb, answerArb).map(([o, a]) => new Attempt(o, a)), fc.constantFrom<DeliveryOutcomeStatus>(...DELIVERY_OUTCOMES).map((s) => new Report(s))], { maxCommands: 25 }),
        (cmds) => {
          fc.modelRun(
            () => ({
              model: { status: 'PENDING', attempts: 0, settled: false, appSourceId: null, emitted: [] } as Model,
              real: { progress: { state: 'PENDING', attempts: 0 }, message: { status: 'PENDING', externalError: null }, appSourceId: null, emitted: [] } as Real,
            }),
            cmds,
          );
        },
      ),
      { numRuns: 1000 },
    );
  });

  test('the app\'s id is taken from a JSON object { sourceId } only (a string, or an integer)', () => {
    expect(sourceIdOfAnswer('{"sourceId":"ext-1"}')).toBe('ext-1');
    expect(sourceIdOfAnswer('{"sourceId":"  ext-2 "}')).toBe('ext-2');
    expect(sourceIdOfAnswer('{"sourceId":42}')).toBe('42');
    for (const answer of [undefined, '', 'ok', '[]', '{"sourceId":""}', '{"sourceId":1.5}', '{"sourceId":{}}', `{"sourceId":"${'x'.repeat(MAX_SOURCE_ID_LENGTH + 1)}"}`]) {
      expect(sourceIdOfAnswer(answer)).toBeNull();
    }
  });

  test('the POST body is the spec 6.6 envelope; data.sourceId is the reply\'s own id', () => {
    const at = new Date('2025-01-02T03:04:05.678Z');
    expect(JSON.parse(apiChannelBody({ id: 'm-1', content: 'hi' }, 'user-42', at))).toEqual({
      event: 'message.created',
      data: { sourceId: 'm-1', recipientIdentifier: 'user-42', content: 'hi', attachments: [] },
      deliveredAt: '2025-01-02T03:04:05.678Z',
    });
  });
});

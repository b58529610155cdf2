import type { DriverConnection } from '../../../core/connections/driver.ts';
import { DriverError } from '../../../core/connections/driver.ts';
import { badRequest, DomainError, unprocessable } from '../../../core/shared/errors.ts';
import type { GraphPhoneNumber } from './graph-types.ts';

/**
 * The customer's own platform credentials of an official connection (spec 1.2: "the
 * network's business cloud API, using the customer's own platform credentials").
 */
export interface CloudApiCredentials {
  /** Id of the business phone number (numeric string), the `{phone-number-id}` of every call. */
  phoneNumberId: string;
  /** Id of the WhatsApp Business Account that owns the number (numeric string). */
  businessAccountId: string;
  /** System-user or user access token, sent as `Authorization: Bearer`. */
  accessToken: string;
  /** App secret: when set, callbacks must carry a valid `x-hub-signature-256` (spec 5.6). */
  appSecret?: string;
  /** The token the platform echoes in the `GET` verification handshake (spec 4.5). */
  verifyToken: string;
}

const NUMERIC = /^\d{1,32}$/;

/**
 * Checks the settings given at connection creation and keeps only the known fields, trimmed.
 * Every problem is reported at once (400 with one message per broken rule).
 */
export function prepareCloudApiCredentials(input: Record<string, unknown>): Record<string, string> {
  const problems: string[] = [];
  const text = (key: string): string | undefined => {
    const value = input[key];
    return typeof value === 'string' ? value.trim() : undefined;
  };

  const phoneNumberId = text('phoneNumberId');
  if (!phoneNumberId || !NUMERIC.test(phoneNumberId)) problems.push('phoneNumberId must be the numeric id of the business phone number (a string of digits)');

  const businessAccountId = text('businessAccountId');
  if (!businessAccountId || !NUMERIC.test(businessAccountId)) problems.push('businessAccountId must be the numeric id of the WhatsApp Business Account (a string of digits)');

  const accessToken = text('accessToken');
  if (!accessToken) problems.push('accessToken must be a non-empty string');
  else if (/\s/.test(accessToken)) problems.push('accessToken must not contain spaces');

  const verifyToken = text('verifyToken');
  if (!verifyToken) problems.push('verifyToken must be a non-empty string');

  const rawSecret = input.appSecret;
  const appSecret = text('appSecret');
  if (rawSecret !== undefined && rawSecret !== null && typeof rawSecret !== 'string') problems.push('appSecret must be a string when given');

  if (problems.length > 0) throw badRequest(problems);
  const credentials: Record<string, string> = {
    phoneNumberId: phoneNumberId!,
    businessAccountId: businessAccountId!,
    accessToken: accessToken!,
    verifyToken: verifyToken!,
  };
  if (appSecret) credentials.appSecret = appSecret;
  return credentials;
}

/** The credentials of a stored connection; a connection without them cannot talk to the API. */
export function readCredentials(connection: Pick<DriverConnection, 'credentials'>): CloudApiCredentials {
  const { phoneNumberId, businessAccountId, accessToken, appSecret, verifyToken } = connection.credentials;
  if (!phoneNumberId || !accessToken) {
    throw new DriverError('The connection has no Cloud API credentials (phoneNumberId and accessToken are required)', 'CREDENTIALS_MISSING', false);
  }
  return {
    phoneNumberId,
    businessAccountId: businessAccountId ?? '',
    accessToken,
    verifyToken: verifyToken ?? '',
    ...(appSecret ? { appSecret } : {}),
  };
}

/**
 * Before a connection claims a phone number id, the platform must confirm that the token can
 * read that number (`GET /{phone-number-id}`): a token of another business cannot. Otherwise a
 * bogus connection would claim someone else's number, and the 409 of the next one would tell
 * anybody which numbers are registered here.
 */
export async function confirmNumberOwnership(client: { phoneNumber(): Promise<GraphPhoneNumber> }, phoneNumberId: string): Promise<void> {
  let number: GraphPhoneNumber;
  try {
    number = await client.phoneNumber();
  } catch (error) {
    if (!(error instanceof DriverError)) throw error;
    if (error.retryable) {
      // The cause (DNS, refused, timeout) is the operator's business, not the caller's.
      throw new DomainError('upstream_failed', 'The platform could not be reached or did not answer whether these credentials own the number; nothing was stored. Try again later.');
    }
    throw unprocessable(`The platform did not confirm that these credentials own phone number id ${phoneNumberId}: ${error.message}`);
  }
  if (number.id !== phoneNumberId) throw unprocessable(`The platform did not confirm that these credentials own phone number id ${phoneNumberId}`);
}

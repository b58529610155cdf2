const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids in paths are user input: a malformed one is simply not found (never a database error). */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/**
 * A log line for people at a terminal: `12:00:01.234 INFO  message key=value …`. Made in
 * process from the JSON line (no worker thread, as a transport would need), so the two forms
 * always carry the same fields.
 */
const COLORS: Record<string, string> = { trace: '90', debug: '36', info: '32', warn: '33', error: '31', fatal: '35' };

export function prettyLine(jsonLine: string, options: { color?: boolean } = {}): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(jsonLine) as Record<string, unknown>;
  } catch {
    return jsonLine;
  }
  const { level, time, msg, ...fields } = record;
  const label = String(level ?? '').toUpperCase().padEnd(5);
  const clock = typeof time === 'string' ? time.slice(11, 23) : '';
  const colored = options.color && COLORS[String(level)] ? `\u001b[${COLORS[String(level)]}m${label}\u001b[39m` : label;
  const rest = Object.entries(fields)
    .filter(([key]) => key !== 'error')
    .map(([key, value]) => `${key}=${typeof value === 'string' && !/\s/.test(value) ? value : JSON.stringify(value)}`);
  const error = fields.error as { message?: string; stack?: string } | undefined;
  const errorText = error ? `\n  ${(error.stack ?? error.message ?? '').replace(/\n/g, '\n  ')}` : '';
  return `${[clock, colored, String(msg ?? ''), ...rest].filter(Boolean).join(' ')}${errorText}\n`;
}

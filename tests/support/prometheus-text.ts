/**
 * A strict reader of the Prometheus text exposition format (0.0.4), for tests of `/metrics`:
 * every line must be a comment, a HELP or TYPE line, or a sample of a family whose TYPE came
 * first; names, labels and values must be well-formed; no sample may repeat; a histogram's
 * buckets must be cumulative and end in `+Inf` equal to its `_count`. Anything else throws.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  samples: Sample[];
  /** Family name → counter, gauge, histogram, summary or untyped. */
  types: Map<string, string>;
  help: Map<string, string>;
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

export function parseExposition(text: string): Exposition {
  const types = new Map<string, string>();
  const help = new Map<string, string>();
  const samples: Sample[] = [];
  const seen = new Set<string>();
  if (text.length > 0 && !text.endsWith('\n')) throw new Error('the exposition must end with a newline');
  text.split('\n').forEach((line, index) => {
    const where = `line ${index + 1} (${JSON.stringify(line.slice(0, 80))})`;
    if (line === '') return;
    if (line.startsWith('#')) {
      const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!meta) return; // a plain comment
      const [, kind, name, rest] = meta as unknown as [string, string, string, string];
      if (!METRIC_NAME.test(name)) throw new Error(`${where}: bad metric name`);
      if (kind === 'TYPE') {
        if (!TYPES.has(rest)) throw new Error(`${where}: unknown type`);
        if (types.has(name)) throw new Error(`${where}: TYPE given twice`);
        if (samples.some((s) => familyOf(s.name, types) === name)) throw new Error(`${where}: TYPE after its samples`);
        types.set(name, rest);
      } else {
        if (help.has(name)) throw new Error(`${where}: HELP given twice`);
        help.set(name, rest);
      }
      return;
    }
    const sample = parseSample(line, where);
    const family = familyOf(sample.name, types);
    if (!family) throw new Error(`${where}: a sample of no declared family`);
    const key = `${sample.name}${JSON.stringify(Object.entries(sample.labels).sort())}`;
    if (seen.has(key)) throw new Error(`${where}: sample repeated`);
    seen.add(key);
    samples.push(sample);
  });
  checkHistograms(samples, types);
  return { samples, types, help };
}

/**
 * The value of the sample with exactly these labels; 0 when its family is declared but the
 * sample is absent (a counter never moved). A family never declared throws (a misspelt name).
 */
export function sample(exposition: Exposition, name: string, labels: Record<string, string> = {}): number {
  if (!familyOf(name, exposition.types)) throw new Error(`no metric family declares ${name}`);
  const wanted = JSON.stringify(Object.entries(labels).sort());
  const found = exposition.samples.find((s) => s.name === name && JSON.stringify(Object.entries(s.labels).sort()) === wanted);
  return found?.value ?? 0;
}

function parseSample(line: string, where: string): Sample {
  const head = /^([a-zA-Z_:][a-zA-Z0-9_:]*)/.exec(line);
  if (!head) throw new Error(`${where}: bad metric name`);
  const name = head[1]!;
  let rest = line.slice(name.length);
  const labels: Record<string, string> = {};
  if (rest.startsWith('{')) {
    rest = rest.slice(1);
    while (!rest.startsWith('}')) {
      const label = /^([a-zA-Z_][a-zA-Z0-9_]*)="/.exec(rest);
      if (!label || !LABEL_NAME.test(label[1]!)) throw new Error(`${where}: bad label`);
      rest = rest.slice(label[0].length);
      let value = '';
      for (;;) {
        const c = rest[0];
        if (c === undefined) throw new Error(`${where}: unterminated label value`);
        rest = rest.slice(1);
        if (c === '"') break;
        if (c === '\\') {
          const escaped = rest[0];
          rest = rest.slice(1);
          if (escaped === 'n') value += '\n';
          else if (escaped === '\\' || escaped === '"') value += escaped;
          else throw new Error(`${where}: bad escape in a label value`);
        } else value += c;
      }
      if (label[1]! in labels) throw new Error(`${where}: label repeated`);
      labels[label[1]!] = value;
      if (rest.startsWith(',')) rest = rest.slice(1);
      else if (!rest.startsWith('}')) throw new Error(`${where}: expected , or }`);
    }
    rest = rest.slice(1);
  }
  const tail = /^ (\S+)(?: (-?\d+))?$/.exec(rest);
  if (!tail) throw new Error(`${where}: expected one space, a value and an optional timestamp`);
  return { name, labels, value: parseValue(tail[1]!, where) };
}

/** A value as Go's ParseFloat reads it (the format's own rule): NaN and infinities in any case. */
function parseValue(raw: string, where: string): number {
  if (/^[-+]?(inf|infinity)$/i.test(raw)) return raw.startsWith('-') ? -Infinity : Infinity;
  if (/^nan$/i.test(raw)) return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(raw)) throw new Error(`${where}: bad value ${raw}`);
  return Number(raw);
}

/** The declared family a sample belongs to (a histogram's `_bucket`, `_sum`, `_count` belong to it). */
function familyOf(name: string, types: Map<string, string>): string | undefined {
  if (types.has(name)) return name;
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!name.endsWith(suffix)) continue;
    const base = name.slice(0, -suffix.length);
    const type = types.get(base);
    if (type === 'histogram' || (type === 'summary' && suffix !== '_bucket')) return base;
  }
  return undefined;
}

function checkHistograms(samples: Sample[], types: Map<string, string>): void {
  for (const [family, type] of types) {
    if (type !== 'histogram') continue;
    const series = new Map<string, Array<{ le: number; value: number }>>();
    for (const s of samples.filter((s) => s.name === `${family}_bucket`)) {
      if (s.labels.le === undefined) throw new Error(`${family}: a bucket without le`);
      const { le, ...rest } = s.labels;
      const key = JSON.stringify(Object.entries(rest).sort());
      series.set(key, [...(series.get(key) ?? []), { le: parseValue(le, family), value: s.value }]);
    }
    for (const [key, buckets] of series) {
      buckets.sort((a, b) => a.le - b.le);
      for (let i = 1; i < buckets.length; i++) if (buckets[i]!.value < buckets[i - 1]!.value) throw new Error(`${family}${key}: buckets not cumulative`);
      const last = buckets.at(-1)!;
      if (last.le !== Infinity) throw new Error(`${family}${key}: no +Inf bucket`);
      const count = samples.find((s) => s.name === `${family}_count` && JSON.stringify(Object.entries(s.labels).sort()) === key);
      if (count?.value !== last.value) throw new Error(`${family}${key}: +Inf bucket ${last.value} but _count ${count?.value}`);
    }
  }
}

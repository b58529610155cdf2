import { isObject, nonEmptyString, variablesOf, type Json } from './template-json.ts';

/**
 * What a person fills in to send a template: one field per parameter its definition asks of a
 * send (components.ts `checkSend` holds a send to the same rules), and the send's `components`
 * built back from the values. The API describes a template's fields with it
 * (`GET /v3/helpdesk/inboxes/{id}/templates`) and the console builds the send from the same
 * code, so the two never disagree about where a value goes.
 */

/** The kind of value a field takes: text, a media link for a media header, a latitude,longitude pair. */
export type TemplateFieldType = 'text' | 'image' | 'video' | 'document' | 'location' | 'coupon_code';

export interface TemplateField {
  /** The send component the value goes into (sending casing). */
  component: 'header' | 'body' | 'button';
  /** Header and body: the variable's number, `{{n}}`. */
  variable: number | null;
  /** Buttons: the button's position (from 0) and its sub_type. */
  index: number | null;
  subType: string | null;
  type: TemplateFieldType;
  /** What to ask for, in words. */
  label: string;
  /** The definition's example value, when it has one. */
  example: string | null;
}

/** Component types these fields cover; a template holding another (a carousel) cannot be filled in this way. */
const COVERED = new Set(['HEADER', 'BODY', 'FOOTER', 'BUTTONS']);
const MEDIA = ['IMAGE', 'VIDEO', 'DOCUMENT'];

/** The fields of a stored definition (upper-case casing), in the order they appear. */
export function templateFields(components: readonly unknown[]): TemplateField[] {
  const fields: TemplateField[] = [];
  const find = (type: string) => components.find((c): c is Json => isObject(c) && c.type === type);
  const header = find('HEADER');
  if (header) {
    const format = String(header.format ?? '');
    if (format === 'TEXT') {
      const example = firstExample(isObject(header.example) ? header.example.header_text : undefined, 0);
      for (const n of numbered(header.text)) fields.push(field('header', n, null, null, 'text', `Header {{${n}}}`, example));
    } else if (MEDIA.includes(format)) {
      fields.push(field('header', null, null, null, format.toLowerCase() as TemplateFieldType, `Header ${format.toLowerCase()} (https link)`, null));
    } else if (format === 'LOCATION') {
      fields.push(field('header', null, null, null, 'location', 'Header location (latitude,longitude)', null));
    }
  }
  const body = find('BODY');
  const bodyExamples = isObject(body?.example) && Array.isArray(body.example.body_text) ? body.example.body_text[0] : undefined;
  for (const n of numbered(body?.text)) fields.push(field('body', n, null, null, 'text', `Body {{${n}}}`, firstExample(bodyExamples, n - 1)));
  const buttons = find('BUTTONS');
  (Array.isArray(buttons?.buttons) ? buttons.buttons : []).forEach((button: unknown, index: number) => {
    if (!isObject(button)) return;
    const name = nonEmptyString(button.text) ? `“${button.text}”` : String(index);
    if (button.type === 'URL' && variablesOf(button.url).length > 0) fields.push(field('button', null, index, 'url', 'text', `Button ${name}: the end of its link`, firstExample(button.example, 0)));
    if (button.type === 'COPY_CODE') fields.push(field('button', null, index, 'copy_code', 'coupon_code', `Button ${name}: the code to copy`, firstExample(button.example, 0)));
    if (button.type === 'OTP') fields.push(field('button', null, index, 'otp', 'text', `Button ${name}: the one-time code`, null));
  });
  return fields;
}

/** Whether every component of the definition is one these fields can fill (a carousel is not). */
export function fillableTemplate(components: readonly unknown[]): boolean {
  return components.every((c) => isObject(c) && typeof c.type === 'string' && COVERED.has(c.type));
}

/**
 * The send's `components` (lower-case casing, as the messaging API takes them) from one value
 * per field, in the fields' order. Empty values are left as they are: the send check names them.
 */
export function templateSendComponents(fields: readonly TemplateField[], values: readonly string[]): Json[] {
  const header: Json[] = [];
  const body: Json[] = [];
  const buttons: Json[] = [];
  fields.forEach((f, i) => {
    const value = (values[i] ?? '').trim();
    const parameter = parameterOf(f.type, value);
    if (f.component === 'header') header.push(parameter);
    else if (f.component === 'body') body.push(parameter);
    else buttons.push({ type: 'button', sub_type: f.subType, index: f.index, parameters: [parameter] });
  });
  return [...(header.length > 0 ? [{ type: 'header', parameters: header }] : []), ...(body.length > 0 ? [{ type: 'body', parameters: body }] : []), ...buttons];
}

function parameterOf(type: TemplateFieldType, value: string): Json {
  switch (type) {
    case 'text':
      return { type: 'text', text: value };
    case 'coupon_code':
      return { type: 'coupon_code', coupon_code: value };
    case 'location': {
      const [latitude, longitude] = value.split(',').map((part) => Number(part.trim()));
      return { type: 'location', location: { latitude, longitude } };
    }
    default:
      return { type, [type]: { link: value } };
  }
}

function field(component: TemplateField['component'], variable: number | null, index: number | null, subType: string | null, type: TemplateFieldType, label: string, example: string | null): TemplateField {
  return { component, variable, index, subType, type, label, example };
}

/** The distinct variable numbers of a text, in order. */
function numbered(text: unknown): number[] {
  return [...new Set(variablesOf(text))].sort((a, b) => a - b);
}

function firstExample(examples: unknown, at: number): string | null {
  if (!Array.isArray(examples)) return null;
  const value = examples[at];
  return typeof value === 'string' ? value : null;
}

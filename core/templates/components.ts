import type { TemplateComponentRules } from './component-rules.ts';
import { isObject as isJsonObject, nonEmptyString, variablesOf } from './template-json.ts';

/**
 * What a template looks like (definition casing is upper: `HEADER`, `BODY`, `FOOTER`,
 * `BUTTONS`, `QUICK_REPLY`; spec 4.3) and what a send must give for it (sending casing is
 * lower: `header`, `body`, `button`, `quick_reply`). Both checks report every problem at once
 * as `<path>: <message>` strings. Component types the base does not know are asked of the
 * enabled plugins' rules (`ctx.templateComponents`), else refused naming the plugin they need.
 */

/** Component types that plugins teach, and the plugin each needs (for the error). */
export const PLUGIN_COMPONENT_TYPES: Record<string, string> = { CAROUSEL: 'carousels' };

export const TEMPLATE_CATEGORIES = ['MARKETING', 'UTILITY', 'AUTHENTICATION'] as const;
const HEADER_FORMATS = ['TEXT', 'IMAGE', 'VIDEO', 'DOCUMENT', 'LOCATION'] as const;
const MEDIA_FORMATS = ['IMAGE', 'VIDEO', 'DOCUMENT'];
const BUTTON_TYPES = ['QUICK_REPLY', 'URL', 'PHONE_NUMBER', 'COPY_CODE', 'OTP', 'FLOW'] as const;
/** Buttons whose send needs (or may carry) a parameter, and the parameter's type. */
const DYNAMIC_BUTTONS: Record<string, 'payload' | 'text' | 'coupon_code'> = { QUICK_REPLY: 'payload', URL: 'text', COPY_CODE: 'coupon_code', OTP: 'text' };

type Obj = Record<string, any>;
const isObject = (value: unknown): value is Obj => isJsonObject(value);
const nonEmpty = nonEmptyString;

/** Variables must be numbered 1..n with none missing (`{{1}} {{3}}` leaves out `{{2}}`). */
function checkNumbering(text: string, path: string, problems: string[]): number {
  const numbers = [...new Set(variablesOf(text))].sort((a, b) => a - b);
  numbers.forEach((n, i) => {
    if (n !== i + 1) problems.push(`${path}: variables must be numbered {{1}} to {{${numbers.length}}} without gaps (found {{${n}}})`);
  });
  return numbers.length;
}

/** Every problem of a template definition (name, language, category, components), at once. */
export function checkDefinition(input: { name: unknown; language: unknown; category: unknown; components: unknown }, rules: TemplateComponentRules | undefined): string[] {
  const problems: string[] = [];
  if (!nonEmpty(input.name) || !/^[a-z0-9_]{1,512}$/.test(input.name)) problems.push('body.name: lower-case letters, digits and underscores only, 1 to 512 characters');
  if (!nonEmpty(input.language) || !/^[a-z]{2,3}(_[A-Z]{2,4})?$/.test(input.language)) problems.push('body.language: a language code such as en or en_US');
  if (!(TEMPLATE_CATEGORIES as readonly unknown[]).includes(input.category)) problems.push(`body.category: one of ${TEMPLATE_CATEGORIES.join(', ')}`);
  if (!Array.isArray(input.components) || input.components.length === 0) {
    problems.push('body.components: a non-empty array of components');
    return problems;
  }
  const seen = new Map<string, number>();
  input.components.forEach((component, i) => {
    const path = `body.components[${i}]`;
    if (!isObject(component) || !nonEmpty(component.type)) {
      problems.push(`${path}.type: required (HEADER, BODY, FOOTER, BUTTONS${rules?.size ? `, ${[...rules.keys()].join(', ')}` : ''})`);
      return;
    }
    const type = component.type;
    if (type !== type.toUpperCase()) {
      problems.push(`${path}.type: definition casing is upper case (${type.toUpperCase()}, not ${type})`);
      return;
    }
    seen.set(type, (seen.get(type) ?? 0) + 1);
    if (seen.get(type) === 2) problems.push(`${path}.type: ${type} appears more than once`);
    switch (type) {
      case 'HEADER':
        return checkHeader(component, path, problems);
      case 'BODY':
        return checkBody(component, path, problems);
      case 'FOOTER':
        if (!nonEmpty(component.text) || component.text.length > 60) problems.push(`${path}.text: 1 to 60 characters`);
        else if (variablesOf(component.text).length > 0) problems.push(`${path}.text: a footer takes no variables`);
        return;
      case 'BUTTONS':
        return checkButtons(component, path, problems);
    }
    const rule = rules?.get(type);
    if (rule) problems.push(...rule.checkDefinition(component, path));
    else if (PLUGIN_COMPONENT_TYPES[type]) problems.push(`${path}.type: ${type} needs the ${PLUGIN_COMPONENT_TYPES[type]} plugin, which is not enabled`);
    else problems.push(`${path}.type: unknown component type ${type}`);
  });
  if (!seen.has('BODY')) problems.push('body.components: a BODY component is required');
  return problems;
}

function checkHeader(component: Obj, path: string, problems: string[]): void {
  const format = component.format;
  if (!(HEADER_FORMATS as readonly unknown[]).includes(format)) {
    problems.push(`${path}.format: one of ${HEADER_FORMATS.join(', ')}`);
    return;
  }
  if (format === 'TEXT') {
    if (!nonEmpty(component.text) || component.text.length > 60) problems.push(`${path}.text: 1 to 60 characters`);
    else if (checkNumbering(component.text, `${path}.text`, problems) > 1) problems.push(`${path}.text: a text header takes at most one variable`);
  } else if (MEDIA_FORMATS.includes(format)) {
    const handles = component.example?.header_handle;
    if (!Array.isArray(handles) || handles.length === 0 || !handles.every(nonEmpty)) {
      problems.push(`${path}.example.header_handle: a media header needs an example, the handle from POST /templates/header-media`);
    }
  }
}

function checkBody(component: Obj, path: string, problems: string[]): void {
  if (!nonEmpty(component.text) || component.text.length > 1024) {
    problems.push(`${path}.text: 1 to 1024 characters`);
    return;
  }
  const count = checkNumbering(component.text, `${path}.text`, problems);
  const examples = component.example?.body_text;
  if (examples !== undefined) {
    const first = Array.isArray(examples) ? examples[0] : undefined;
    if (!Array.isArray(first) || first.length !== count || !first.every((v: unknown) => typeof v === 'string')) {
      problems.push(`${path}.example.body_text: one list of ${count} example value(s), one per variable`);
    }
  }
}

function checkButtons(component: Obj, path: string, problems: string[]): void {
  const buttons = component.buttons;
  if (!Array.isArray(buttons) || buttons.length < 1 || buttons.length > 10) {
    problems.push(`${path}.buttons: 1 to 10 buttons`);
    return;
  }
  buttons.forEach((button, j) => {
    const at = `${path}.buttons[${j}]`;
    if (!isObject(button) || !(BUTTON_TYPES as readonly unknown[]).includes(button.type)) {
      problems.push(`${at}.type: one of ${BUTTON_TYPES.join(', ')} (upper case)`);
      return;
    }
    if (!nonEmpty(button.text) || button.text.length > 25) problems.push(`${at}.text: 1 to 25 characters`);
    if (button.type === 'URL') {
      if (!nonEmpty(button.url) || !/^https?:\/\//.test(button.url)) problems.push(`${at}.url: an http(s) URL`);
      else {
        const vars = variablesOf(button.url);
        if (vars.length > 1 || (vars.length === 1 && (vars[0] !== 1 || !/\{\{\s*1\s*\}\}$/.test(button.url)))) problems.push(`${at}.url: at most one variable, {{1}}, at the end`);
      }
    }
    if (button.type === 'PHONE_NUMBER' && (!nonEmpty(button.phone_number) || !/^\+?\d{6,20}$/.test(button.phone_number))) problems.push(`${at}.phone_number: a phone number`);
  });
}

/** What a stored definition asks of a send. */
interface Expectation {
  header: { format: string; variables: number } | null;
  body: number;
  buttons: Array<{ type: string; dynamic: boolean }>;
}

function expectationOf(components: unknown[]): Expectation {
  const find = (type: string) => components.find((c): c is Obj => isObject(c) && c.type === type);
  const header = find('HEADER');
  const buttons = find('BUTTONS');
  return {
    header: header ? { format: String(header.format), variables: header.format === 'TEXT' ? new Set(variablesOf(header.text)).size : 0 } : null,
    body: new Set(variablesOf(find('BODY')?.text)).size,
    buttons: (Array.isArray(buttons?.buttons) ? buttons.buttons : []).map((b: Obj) => ({
      type: String(b.type),
      dynamic: b.type === 'URL' ? variablesOf(b.url).length > 0 : b.type === 'COPY_CODE' || b.type === 'OTP',
    })),
  };
}

/**
 * Every problem of a send's `components` against the stored definition: the number of body
 * parameters against the body's `{{n}}`, the header parameter against the header's format,
 * the button parameters against the buttons (index, sub_type, parameter). Lower-case casing.
 */
export function checkSend(definition: unknown[], components: unknown, rules: TemplateComponentRules | undefined): string[] {
  const problems: string[] = [];
  if (components !== undefined && !Array.isArray(components)) return ['body.components: an array of components'];
  const given = (components ?? []) as unknown[];
  const expected = expectationOf(definition);
  let header: Obj | undefined;
  let body: Obj | undefined;
  const buttons = new Map<number, Obj>();

  given.forEach((component, i) => {
    const path = `body.components[${i}]`;
    if (!isObject(component) || !nonEmpty(component.type)) {
      problems.push(`${path}.type: required (header, body, button)`);
      return;
    }
    const type = component.type;
    if (type !== type.toLowerCase()) {
      problems.push(`${path}.type: sending casing is lower case (${type.toLowerCase()}, not ${type})`);
      return;
    }
    if (type === 'header') {
      if (header) problems.push(`${path}: only one header component`);
      header = component;
      checkHeaderParameters(component, expected.header, path, problems);
    } else if (type === 'body') {
      if (body) problems.push(`${path}: only one body component`);
      body = component;
      checkTextParameters(component.parameters, expected.body, `${path}.parameters`, 'the body', problems);
    } else if (type === 'button') {
      checkButtonParameters(component, expected.buttons, path, problems, buttons);
    } else {
      const rule = rules?.get(type.toUpperCase());
      const defined = definition.find((c) => isObject(c) && String((c as Obj).type).toUpperCase() === type.toUpperCase());
      if (rule) problems.push(...rule.checkSend(component, path, defined));
      else if (PLUGIN_COMPONENT_TYPES[type.toUpperCase()]) problems.push(`${path}.type: ${type} needs the ${PLUGIN_COMPONENT_TYPES[type.toUpperCase()]} plugin, which is not enabled`);
      else problems.push(`${path}.type: unknown component type ${type} (header, body or button)`);
    }
  });

  if (!body && expected.body > 0) problems.push(`body.components: the template's body has ${expected.body} variable(s); send a body component with ${expected.body} text parameter(s)`);
  if (!header && expected.header && (expected.header.variables > 0 || MEDIA_FORMATS.includes(expected.header.format) || expected.header.format === 'LOCATION')) {
    problems.push(`body.components: the template's ${expected.header.format} header needs a header component with its parameter`);
  }
  expected.buttons.forEach((button, index) => {
    if (button.dynamic && !buttons.has(index)) problems.push(`body.components: the template's ${button.type} button ${index} needs a button component (index ${index}) with its parameter`);
  });
  return problems;
}

/**
 * For a template this service does not know: only what the enabled plugins can judge alone
 * (a carousel's own shape), since the variables depend on a definition we do not have.
 */
export function checkPluginComponents(components: unknown, rules: TemplateComponentRules | undefined): string[] {
  if (!Array.isArray(components)) return [];
  return components.flatMap((component, i) => {
    if (!isObject(component) || typeof component.type !== 'string') return [];
    const rule = rules?.get(component.type.toUpperCase());
    return rule ? rule.checkSend(component, `body.components[${i}]`) : [];
  });
}

function checkTextParameters(parameters: unknown, expected: number, path: string, what: string, problems: string[]): void {
  const list = parameters === undefined ? [] : parameters;
  if (!Array.isArray(list)) {
    problems.push(`${path}: an array of parameters`);
    return;
  }
  if (list.length !== expected) problems.push(`${path}: ${what} of the template has ${expected} variable(s), ${list.length} parameter(s) given`);
  list.forEach((parameter, k) => {
    if (!isObject(parameter) || parameter.type !== 'text' || !nonEmpty(parameter.text)) {
      if (!isObject(parameter) || !['currency', 'date_time'].includes(parameter.type)) problems.push(`${path}[${k}]: a { type: "text", text } parameter with non-empty text`);
    }
  });
}

function checkHeaderParameters(component: Obj, expected: Expectation['header'], path: string, problems: string[]): void {
  if (!expected) {
    problems.push(`${path}: the template has no header`);
    return;
  }
  if (expected.format === 'TEXT') return checkTextParameters(component.parameters, expected.variables, `${path}.parameters`, 'the header', problems);
  const parameters = component.parameters;
  const kind = expected.format.toLowerCase();
  if (!Array.isArray(parameters) || parameters.length !== 1) {
    problems.push(`${path}.parameters: the template's ${expected.format} header takes exactly one ${kind} parameter`);
    return;
  }
  const parameter = parameters[0];
  if (!isObject(parameter) || parameter.type !== kind) {
    problems.push(`${path}.parameters[0].type: the header format is ${expected.format}; give a ${kind} parameter`);
    return;
  }
  if (kind === 'location') {
    const location = parameter.location;
    if (!isObject(location) || typeof location.latitude !== 'number' || typeof location.longitude !== 'number') problems.push(`${path}.parameters[0].location: latitude and longitude`);
    return;
  }
  const media = parameter[kind];
  if (!isObject(media) || (nonEmpty(media.id) ? 1 : 0) + (nonEmpty(media.link) ? 1 : 0) !== 1) {
    problems.push(`${path}.parameters[0].${kind}: exactly one of id (from POST /templates/send-media) or link`);
  }
}

function checkButtonParameters(component: Obj, expected: Expectation['buttons'], path: string, problems: string[], seen: Map<number, Obj>): void {
  const index = component.index;
  if (typeof index !== 'number' || !Number.isInteger(index)) {
    problems.push(`${path}.index: an integer (the button's position, from 0)`);
    return;
  }
  const button = expected[index];
  if (!button) {
    problems.push(`${path}.index: the template has ${expected.length} button(s); ${index} is not one of them`);
    return;
  }
  if (seen.has(index)) problems.push(`${path}.index: button ${index} is given twice`);
  seen.set(index, component);
  const subType = button.type.toLowerCase();
  if (component.sub_type !== subType) problems.push(`${path}.sub_type: button ${index} is ${subType}`);
  const kind = DYNAMIC_BUTTONS[button.type];
  const parameters = component.parameters;
  if (!kind || (button.type === 'URL' && !button.dynamic)) {
    if (Array.isArray(parameters) && parameters.length > 0) problems.push(`${path}.parameters: button ${index} (${subType}) takes no parameter`);
    return;
  }
  if (!Array.isArray(parameters) || parameters.length !== 1) {
    problems.push(`${path}.parameters: button ${index} (${subType}) takes exactly one ${kind} parameter`);
    return;
  }
  const parameter = parameters[0];
  if (!isObject(parameter) || parameter.type !== kind || !nonEmpty(parameter[kind])) problems.push(`${path}.parameters[0]: a { type: "${kind}", ${kind} } parameter`);
}

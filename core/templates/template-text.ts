import type { TemplateComponentRules } from '../templates/component-rules.ts';
import { isObject, nonEmptyString, type Json } from './template-json.ts';

/**
 * A whole template send as plain text, for a connection whose network has no templates. Only a
 * template holding a component that a plugin can render (`asText`, such as the carousels
 * plugin's `CAROUSEL`) degrades; any other template answers null and stays refused.
 *
 * The text is the template's body, then each such component's text, then the footer, separated
 * by blank lines. With the stored definition (`definition.components`, upper-case casing) the
 * body and footer are its texts with the send's `body` parameters filled in; without it, the
 * body is the send's body parameters joined by spaces and there is no footer.
 */
export function templateAsText(
  template: { components?: unknown[] },
  rules: TemplateComponentRules,
  definition?: { components?: unknown[] },
): string | null {
  const sent = (template.components ?? []).filter(isObject);
  const defined = (definition?.components ?? []).filter(isObject);
  const typed = (components: Json[], type: string) => components.find((c) => typeof c.type === 'string' && c.type.toUpperCase() === type);

  const rendered: string[] = [];
  for (const component of sent) {
    const type = typeof component.type === 'string' ? component.type.toUpperCase() : '';
    const asText = rules.get(type)?.asText as ((component: unknown, definition?: unknown) => string | null) | undefined;
    if (!asText) continue;
    const text = asText(component, typed(defined, type));
    if (text === null) return null;
    rendered.push(text);
  }
  // A definition may hold the component while the send leaves it out (nothing to fill in).
  for (const component of defined) {
    const type = typeof component.type === 'string' ? component.type.toUpperCase() : '';
    const asText = rules.get(type)?.asText;
    if (!asText || typed(sent, type)) continue;
    const text = asText(component);
    if (text === null) return null;
    rendered.push(text);
  }
  if (rendered.length === 0) return null;

  const bodyValues = parametersOf(typed(sent, 'BODY'));
  const definedBody = typed(defined, 'BODY');
  const body = nonEmptyString(definedBody?.text) ? fillVariables(definedBody.text, bodyValues) : bodyValues.filter(Boolean).join(' ');
  const footer = typed(defined, 'FOOTER')?.text;
  return [body, ...rendered, nonEmptyString(footer) ? `_${footer}_` : ''].filter(Boolean).join('\n\n');
}

/** `{{1}}`, `{{2}}`, … replaced by the values in order; a variable without a value stays as written. */
export function fillVariables(text: string, values: readonly string[]): string {
  return text.replace(/\{\{\s*(\d+)\s*\}\}/g, (whole, n: string) => values[Number(n) - 1] ?? whole);
}

/**
 * The values a send component gives its variables, as text: a `text` parameter's text, the
 * `fallback_value` of a currency or date, a payload; '' for media and anything unreadable.
 */
export function parametersOf(component: Json | undefined): string[] {
  const parameters = Array.isArray(component?.parameters) ? component.parameters : [];
  return parameters.map((p: unknown) => {
    if (!isObject(p)) return '';
    if (typeof p.text === 'string') return p.text;
    for (const key of ['currency', 'date_time']) {
      const value = p[key];
      if (isObject(value) && typeof value.fallback_value === 'string') return value.fallback_value;
    }
    return '';
  });
}

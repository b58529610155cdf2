/**
 * Template components a plugin teaches the base (the `carousels` plugin teaches `CAROUSEL`):
 * how to check a definition (upper-case casing, as created) and a send (lower-case casing), and
 * how to render it as plain text where the network has no templates (an unofficial connection).
 * The base refuses a component type no enabled plugin knows, naming the plugin it needs.
 */
export interface TemplateComponentRule {
  /** The plugin that teaches it (for the "needs the … plugin" error). */
  plugin: string;
  /** Every problem of a definition component at once, as `<path>: <message>` strings; [] when valid. */
  checkDefinition(component: unknown, path: string): string[];
  /**
   * Every problem of a send-time component at once; [] when valid. `definition` is the stored
   * template's component of the same type, when the template is known: the send is held against it.
   */
  checkSend(component: unknown, path: string, definition?: unknown): string[];
  /**
   * The component as plain text for a network without templates, or null when it cannot degrade;
   * with the stored definition's component of the same type when known (labels, texts).
   */
  asText?(component: unknown, definition?: unknown): string | null;
}

/** The rules of the enabled plugins, by component type in upper case (`CAROUSEL`). */
export type TemplateComponentRules = ReadonlyMap<string, TemplateComponentRule>;

import type { TemplateComponentRule } from '../templates/component-rules.ts';
import { checkCarouselDefinition } from './definition.ts';
import { checkCarouselSend } from './send.ts';
import { carouselAsText } from './text.ts';

/**
 * The `CAROUSEL` template component (spec 4.3), as the carousels plugin teaches it to the
 * templates base: definition and send checks reporting every problem at once, and the plain-text
 * rendering for a network without templates.
 *
 * `checkSend` and `asText` take, beyond the send component, the template's stored `CAROUSEL`
 * component when the base knows it (an optional argument `TemplateComponentRule` does not
 * declare yet): the send is then held against it (card count, each card's header, body values
 * and buttons) and the text gets the card bodies and button labels.
 */
export const carouselRule: TemplateComponentRule = {
  plugin: 'carousels',
  checkDefinition: checkCarouselDefinition,
  checkSend: (component: unknown, path: string, definition?: unknown) => checkCarouselSend(component, path, definition),
  asText: (component: unknown, definition?: unknown) => carouselAsText(component, definition),
};

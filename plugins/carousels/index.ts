import { carouselRule } from '../../core/carousels/rule.ts';
import type { Plugin } from '../kernel/plugin.ts';

/**
 * Carousel templates (issue 9 item 2; spec 4.3, 6.1, 8): teaches the templates base the
 * `CAROUSEL` component — its definition and send checks and its plain-text rendering on a
 * network without templates. It adds no routes or tables: a carousel is created, sent and
 * tapped through the base's template endpoints and the `messages.upsert` webhook
 * (`templateButtonReplyMessage.selectedId` is the tapped button's payload).
 */
export const carouselsPlugin: Plugin = {
  name: 'carousels',
  templateComponents: { CAROUSEL: carouselRule },
};

import { describe, expect, test } from 'bun:test';
import { checkSend } from '../../core/templates/components.ts';
import { fillableTemplate, templateFields, templateSendComponents } from '../../core/templates/template-fields.ts';

/**
 * The fields of a template (GET /v3/helpdesk/inboxes/{id}/templates) and the send built from
 * them (the console's picker) must agree with the check every template send is held to
 * (core/templates/components.ts `checkSend`): filled in, they make a send it accepts; one left
 * out, it refuses.
 */

const definitions: Record<string, unknown[]> = {
  'text header, body and a link button': [
    { type: 'HEADER', format: 'TEXT', text: 'Order {{1}}', example: { header_text: ['#1'] } },
    { type: 'BODY', text: 'Hi {{1}}, it arrives {{2}}.', example: { body_text: [['Ana', 'today']] } },
    { type: 'FOOTER', text: 'Shop' },
    { type: 'BUTTONS', buttons: [{ type: 'QUICK_REPLY', text: 'OK' }, { type: 'URL', text: 'Track', url: 'https://x.example/t/{{1}}' }] },
  ],
  'image header': [
    { type: 'HEADER', format: 'IMAGE', example: { header_handle: ['h'] } },
    { type: 'BODY', text: 'Look at {{1}}' },
  ],
  'document header and a copy code': [
    { type: 'HEADER', format: 'DOCUMENT', example: { header_handle: ['h'] } },
    { type: 'BODY', text: 'Your invoice' },
    { type: 'BUTTONS', buttons: [{ type: 'COPY_CODE', text: 'Copy' }] },
  ],
  'location header': [
    { type: 'HEADER', format: 'LOCATION' },
    { type: 'BODY', text: 'We are here' },
  ],
  'a static link only': [
    { type: 'BODY', text: 'Nothing to fill' },
    { type: 'BUTTONS', buttons: [{ type: 'URL', text: 'Site', url: 'https://x.example/' }] },
  ],
};

const valueFor = (type: string) => (type === 'location' ? '-23.5, -46.6' : ['image', 'video', 'document'].includes(type) ? 'https://x.example/file' : 'value');

describe('template fields', () => {
  for (const [what, definition] of Object.entries(definitions)) {
    test(`${what}: filled in, the send passes the send check; one left empty, it does not`, () => {
      const fields = templateFields(definition);
      expect(fillableTemplate(definition)).toBe(true);
      const values = fields.map((f) => valueFor(f.type));
      expect(checkSend(definition, templateSendComponents(fields, values), undefined)).toEqual([]);
      if (fields.length > 0) {
        const missing = values.map((v, i) => (i === fields.length - 1 ? '' : v));
        expect(checkSend(definition, templateSendComponents(fields, missing), undefined).length).toBeGreaterThan(0);
      }
    });
  }

  test('the fields name where each value goes, with the definition’s examples', () => {
    expect(templateFields(definitions['text header, body and a link button']!)).toEqual([
      { component: 'header', variable: 1, index: null, subType: null, type: 'text', label: 'Header {{1}}', example: '#1' },
      { component: 'body', variable: 1, index: null, subType: null, type: 'text', label: 'Body {{1}}', example: 'Ana' },
      { component: 'body', variable: 2, index: null, subType: null, type: 'text', label: 'Body {{2}}', example: 'today' },
      { component: 'button', variable: null, index: 1, subType: 'url', type: 'text', label: 'Button “Track”: the end of its link', example: null },
    ]);
    expect(templateFields(definitions['a static link only']!)).toEqual([]);
  });

  test('a carousel is not fillable here', () => {
    expect(fillableTemplate([{ type: 'BODY', text: 'x' }, { type: 'CAROUSEL', cards: [] }])).toBe(false);
  });
});

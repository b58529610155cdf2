import { t } from 'elysia';

/** A template message in a helpdesk reply or first message: one schema for the REST routes and the MCP reply tool. */
export const TemplateBody = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 512 }),
    language: t.String({ minLength: 1, maxLength: 20, description: 'Such as en_US' }),
    components: t.Optional(t.Array(t.Unknown(), { maxItems: 50, description: 'As the messaging API takes them (header, body, buttons parameters)' })),
  },
  { description: 'A template message (the only kind an official connection sends while the 24-hour window is closed)' },
);

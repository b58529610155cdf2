import { t } from 'elysia';

/** Said of every media field (checked by the use case, which reports it with the other broken rules). */
const ONE_SOURCE = 'Exactly one of url or mediaId.';

/**
 * The send request (spec 4.3): `to` and exactly one content field, whose name is the message
 * kind. One definition for every door a send comes through: the REST route validates its body
 * with it and the MCP tool `send_message` advertises and checks it (with `connectionId` and
 * `idempotencyKey`, which REST carries in the path and a header). The descriptions are read by
 * people (the OpenAPI document) and by assistants (the tool list) alike.
 */
export const SendBody = t.Object({
  to: t.String({ description: 'Recipient: a phone number in international format (E.164) such as +5511999999999, or a chat id such as 1203630@g.us for a group' }),
  replyTo: t.Optional(t.String({ description: 'Id (ours or the network’s) of a message of this chat to reply to (quote)' })),
  text: t.Optional(t.String({ description: 'Plain text, up to 4096 characters' })),
  image: t.Optional(t.Composite([mediaFields(), t.Object({ caption: t.Optional(t.String()) })], { description: `An image. ${ONE_SOURCE}` })),
  video: t.Optional(t.Composite([mediaFields(), t.Object({ caption: t.Optional(t.String()) })], { description: `A video. ${ONE_SOURCE}` })),
  audio: t.Optional(
    t.Composite([mediaFields(), t.Object({ voiceNote: t.Optional(t.Boolean({ description: 'Send as a voice note (PTT)' })) })], { description: `An audio file. ${ONE_SOURCE}` }),
  ),
  document: t.Optional(
    t.Composite([mediaFields(), t.Object({ fileName: t.Optional(t.String()), caption: t.Optional(t.String()) })], { description: `A document. ${ONE_SOURCE}` }),
  ),
  sticker: t.Optional(t.Object(mediaFields().properties, { description: `A sticker (image/webp). ${ONE_SOURCE}` })),
  location: t.Optional(
    t.Object({ latitude: t.Number(), longitude: t.Number(), name: t.Optional(t.String()), address: t.Optional(t.String()) }, { description: 'A map location' }),
  ),
  contacts: t.Optional(
    t.Array(t.Object({ name: t.String(), phones: t.Array(t.String()), emails: t.Optional(t.Array(t.String())), organization: t.Optional(t.String()) }), {
      description: 'Contact cards',
    }),
  ),
  list: t.Optional(listContent({ description: 'A list of choices (1 to 10 rows in all); sent as numbered text where the network has no lists' })),
  buttons: t.Optional(buttonsContent({ description: 'Reply buttons (1 to 3); sent as numbered text where the network has no buttons' })),
  reaction: t.Optional(
    t.Object(
      { messageId: t.String({ description: 'Id of the message to react to' }), emoji: t.String({ description: 'An emoji; an empty string removes the reaction' }) },
      { description: 'A reaction to a message of this chat' },
    ),
  ),
  template: t.Optional(
    t.Object(
      { name: t.String(), language: t.String({ description: 'Such as en_US' }), components: t.Optional(t.Array(t.Any())) },
      { description: 'A pre-approved template (official connections only): a template known on the connection must be APPROVED, and its variables must fit it' },
    ),
  ),
});

/** A list message: a button opening sections of rows (sent as numbered text on unofficial accounts). */
export const ListContent = listContent();

/** Reply buttons. */
export const ButtonsContent = buttonsContent();

/** Where a media message's file comes from, and its type. */
function mediaFields() {
  return t.Object({
    url: t.Optional(t.String({ description: 'Public http(s) URL of the file; private, loopback, link-local and internal addresses are refused (400) unless OUTBOUND_ALLOW exempts them' })),
    mediaId: t.Optional(t.String({ description: 'Id of media already uploaded with an upload ticket (the `mediaId` the upload answered)' })),
    mimetype: t.Optional(t.String({ description: 'Media type such as image/jpeg (optional)' })),
  });
}

function listContent(options: { description?: string } = {}) {
  return t.Object(
    {
      body: t.String(),
      buttonText: t.String({ description: 'Label of the button that opens the list' }),
      header: t.Optional(t.String()),
      footer: t.Optional(t.String()),
      sections: t.Array(t.Object({ title: t.String(), rows: t.Array(t.Object({ id: t.String(), title: t.String(), description: t.Optional(t.String()) })) })),
    },
    options,
  );
}

function buttonsContent(options: { description?: string } = {}) {
  return t.Object(
    {
      body: t.String(),
      header: t.Optional(t.String()),
      footer: t.Optional(t.String()),
      buttons: t.Array(t.Object({ id: t.String(), title: t.String({ description: 'Up to 20 characters' }) }), { description: '1 to 3 buttons' }),
    },
    options,
  );
}

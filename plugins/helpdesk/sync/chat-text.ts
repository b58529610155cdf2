import type { OutgoingContent } from '../../../core/messaging/outgoing.ts';
import { incomingText } from '../conversations/subscribers.ts';

/**
 * The words of a stored connection message, as a helpdesk message shows them. A message that
 * came from the network (a contact's, or one typed on the phone) holds the 2.13 data: read as the
 * live subscriber reads it (`incomingText`). One sent through the API holds the send request
 * (`{ kind, <kind>: … }`): its text, caption or a short description.
 */
export function chatMessageText(content: unknown): string {
  const node = (content ?? {}) as Record<string, unknown>;
  if (typeof node.kind === 'string' && node.messageType === undefined) return sentText(node as unknown as OutgoingContent);
  return incomingText(node as Parameters<typeof incomingText>[0]);
}

function sentText(content: OutgoingContent): string {
  const words = (...values: Array<string | undefined>) => values.find((v) => typeof v === 'string' && v.trim() !== '');
  let text: string | undefined;
  switch (content.kind) {
    case 'text':
      text = content.text;
      break;
    case 'image':
      text = words(content.image.caption);
      break;
    case 'video':
      text = words(content.video.caption);
      break;
    case 'document':
      text = words(content.document.caption, content.document.fileName);
      break;
    case 'location':
      text = words(content.location.name, content.location.address);
      break;
    case 'list':
      text = content.list.body;
      break;
    case 'buttons':
      text = content.buttons.body;
      break;
    case 'reaction':
      text = content.reaction.emoji;
      break;
    case 'template':
      text = `[template ${content.template.name}]`;
      break;
  }
  return words(text) ?? `[${content.kind}]`;
}

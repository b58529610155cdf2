/** One conversation as an agent works it: messages, composer, actions and the contact's panel. */
export function ConversationPane({ conversationId }: { conversationId: string }) {
  return <section aria-label="Conversation">{conversationId}</section>;
}

/**
 * What a customer sends to create a template (the API's create body): an English UTILITY
 * template with one body text, its `{{1}}` shown with the example value '42'.
 */
export function utilityTemplate(name: string, bodyText: string) {
  return { name, language: 'en_US', category: 'UTILITY', components: [{ type: 'BODY', text: bodyText, example: { body_text: [['42']] } }] };
}

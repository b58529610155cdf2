/** How plugins show a base message: the same view and presenter as the v3 routes. */
export { MessageView, presentMessage } from '../../adapters/http/presenters/message.ts';

import { AiProviderError, type ChatCompletions } from '../../../core/helpdesk/ai/ai-assist.ts';
import { OutboundRefusal, type Outbound } from '../../kernel/webhooks.ts';

/** How much of a provider's error message is quoted back to the caller. */
const QUOTED_ERROR_LENGTH = 300;

/**
 * The OpenAI-compatible chat-completions API (`POST <baseUrl>/chat/completions`, bearer key),
 * as OpenAI, most gateways and local servers (Ollama, vLLM, LM Studio) speak it, called through
 * the outbound policy (redirects are not followed). Every failure is an `AiProviderError` (502)
 * saying what went wrong; the key is never logged nor quoted (a provider echoing it in an error
 * has it replaced). Only a provider-shaped error (`{ "error": { "message" } }`) is quoted: any
 * other answer is never relayed, so the base URL cannot read another service's pages.
 */
export function chatCompletions(outbound: Outbound): ChatCompletions {
  return {
    async complete({ baseUrl, apiKey, model, messages, timeoutMs }) {
      const redact = (text: string) => (apiKey ? text.split(apiKey).join('[redacted]') : text);
      const noAnswer = `The AI provider did not answer within ${Math.round(timeoutMs / 1000)} s or could not be reached`;
      let response: Response;
      try {
        response = await outbound.fetch(`${baseUrl.replace(/\/+$/, '')}/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json', ...(apiKey && { authorization: `Bearer ${apiKey}` }) },
          body: JSON.stringify({ model, messages }),
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (error) {
        if (error instanceof OutboundRefusal) throw new AiProviderError(`The AI provider's baseUrl is refused by the outbound policy: ${error.message}`);
        throw new AiProviderError(noAnswer);
      }
      let text: string;
      try {
        text = await response.text();
      } catch {
        throw new AiProviderError(noAnswer);
      }
      let body: any;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      if (!response.ok) {
        const detail = typeof body?.error?.message === 'string' ? body.error.message : typeof body?.error === 'string' ? body.error : '';
        const quoted = String(detail).trim().slice(0, QUOTED_ERROR_LENGTH);
        throw new AiProviderError(redact(`The AI provider answered ${response.status}${quoted ? `: ${quoted}` : ''}`));
      }
      const content = body?.choices?.[0]?.message?.content;
      if (typeof content !== 'string') throw new AiProviderError('The AI provider\'s answer is not a chat completion (no choices[0].message.content)');
      return content;
    },
  };
}

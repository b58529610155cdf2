import { AiProviderError, type ChatCompletions } from '../../../core/helpdesk/ai-assist.ts';

/** How much of a provider's error body is quoted back to the caller. */
const QUOTED_ERROR_LENGTH = 300;

/**
 * The OpenAI-compatible chat-completions API (`POST <baseUrl>/chat/completions`, bearer key),
 * as OpenAI, most gateways and local servers (Ollama, vLLM, LM Studio) speak it. Every failure is
 * an `AiProviderError` (502) saying what went wrong; the key is never logged nor quoted (a
 * provider echoing it in an error has it replaced).
 */
export const chatCompletions: ChatCompletions = {
  async complete({ baseUrl, apiKey, model, messages, timeoutMs }) {
    const redact = (text: string) => (apiKey ? text.split(apiKey).join('[redacted]') : text);
    let response: Response;
    try {
      response = await fetch(`${baseUrl.replace(/\/+$/, '')}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', ...(apiKey && { authorization: `Bearer ${apiKey}` }) },
        body: JSON.stringify({ model, messages }),
        signal: AbortSignal.timeout(timeoutMs),
        redirect: 'error',
      });
    } catch (error) {
      const name = (error as Error)?.name;
      if (name === 'TimeoutError' || name === 'AbortError') throw new AiProviderError(`The AI provider did not answer within ${Math.round(timeoutMs / 1000)} s`);
      throw new AiProviderError(redact(`The AI provider could not be reached: ${(error as Error)?.message ?? String(error)}`));
    }
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      const name = (error as Error)?.name;
      throw new AiProviderError(name === 'TimeoutError' || name === 'AbortError' ? `The AI provider did not answer within ${Math.round(timeoutMs / 1000)} s` : 'The AI provider\'s answer could not be read');
    }
    let body: any;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (!response.ok) {
      const detail = typeof body?.error?.message === 'string' ? body.error.message : typeof body?.error === 'string' ? body.error : text;
      throw new AiProviderError(redact(`The AI provider answered ${response.status}: ${String(detail).trim().slice(0, QUOTED_ERROR_LENGTH) || response.statusText}`));
    }
    const content = body?.choices?.[0]?.message?.content;
    if (typeof content !== 'string') throw new AiProviderError('The AI provider\'s answer is not a chat completion (no choices[0].message.content)');
    return content;
  },
};

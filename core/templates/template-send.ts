import { badRequest, unprocessable } from '../shared/errors.ts';
import type { TemplateComponentRules } from './component-rules.ts';
import { checkPluginComponents, checkSend } from './components.ts';
import { isSendable, type TemplateStatus } from './template-status.ts';

/** The port a template send is checked through: the connection's stored template of a name and language. */
export interface SendableTemplates {
  findByName(connectionId: string, name: string, language: string): Promise<{ name: string; language: string; status: TemplateStatus; components: unknown[] } | undefined>;
}

/**
 * The rule every template send is held to, on every surface (v3 and v2 routes, MCP, helpdesk:
 * all reach it through `acceptSend`): when the template is known on the connection it must be
 * APPROVED (422) and the send's components must fit it (400, every problem at once). A
 * template this service does not know (made elsewhere) goes through once the plugins'
 * components in it are well formed; the platform refuses unknown ones (132001).
 */
export async function checkTemplateSendOn(
  templates: SendableTemplates,
  rules: TemplateComponentRules | undefined,
  connectionId: string,
  send: { name: string; language: string; components?: unknown },
): Promise<void> {
  const template = await templates.findByName(connectionId, send.name, send.language);
  if (!template) {
    const problems = checkPluginComponents(send.components, rules);
    if (problems.length > 0) throw badRequest(problems);
    return;
  }
  if (!isSendable(template.status)) {
    throw unprocessable(`Template ${template.name} (${template.language}) is ${template.status}; only an APPROVED template can be sent`);
  }
  const problems = checkSend(template.components, send.components, rules);
  if (problems.length > 0) throw badRequest(problems);
}

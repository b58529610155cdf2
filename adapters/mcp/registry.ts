import { SCOPES, type Scope } from '../../core/oauth/scopes.ts';
import type { Plugin } from '../../plugins/kernel/plugin.ts';
import type { McpToolDefinition } from './tool.ts';
import { getConnectionTool, listConnectionsTool } from './tools/connections.ts';
import { listChatsTool, listMessagesTool } from './tools/history.ts';
import { prepareMediaUploadTool } from './tools/media-upload.ts';
import { sendMessageTool } from './tools/send-message.ts';

/** The tools the base always offers. */
export const BASE_MCP_TOOLS: readonly McpToolDefinition[] = [
  listConnectionsTool,
  getConnectionTool,
  sendMessageTool,
  prepareMediaUploadTool,
  listChatsTool,
  listMessagesTool,
];

/**
 * Every tool on offer: the base tools, then those of each plugin in `plugins` (the enabled
 * ones: a disabled plugin is not in the list, so its tools are not offered). Two tools with
 * one name stop the boot rather than one silently hiding the other.
 */
export function mcpTools(plugins: readonly Plugin[]): McpToolDefinition[] {
  const tools = [...BASE_MCP_TOOLS];
  const owner = new Map(tools.map((tool) => [tool.name, 'the base']));
  for (const plugin of plugins) {
    for (const tool of plugin.mcpTools ?? []) {
      const taken = owner.get(tool.name);
      if (taken) throw new Error(`MCP tool ${tool.name} of plugin ${plugin.name} clashes with a tool of ${taken}`);
      owner.set(tool.name, `plugin ${plugin.name}`);
      tools.push(tool);
    }
  }
  return tools;
}

/**
 * The scopes the offered tools use, in the order of spec 2.7: `scopes_supported` of the
 * protected-resource document of the MCP endpoint (`/.well-known/oauth-protected-resource/v3/mcp`).
 */
export function mcpScopes(plugins: readonly Plugin[]): Scope[] {
  const used = new Set<Scope>(mcpTools(plugins).flatMap((tool) => tool.scopes));
  return SCOPES.filter((scope) => used.has(scope));
}

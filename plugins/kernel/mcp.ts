/** MCP tools a plugin offers (`Plugin.mcpTools`): declared like the base's tools. */
export { defineTool, type McpToolDefinition } from '../../adapters/mcp/tool.ts';

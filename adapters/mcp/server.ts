import { errorField } from '../logging/logger.ts';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { TObject } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { Value } from '@sinclair/typebox/value';
import { satisfies } from '../../core/oauth/scopes.ts';
import { DomainError } from '../../core/shared/errors.ts';
import { httpStatusOf } from '../http/error-status.ts';
import type { McpToolContext, McpToolDefinition, McpToolResult } from './tool.ts';

export const MCP_SERVER_INFO = { name: 'switchboard', title: 'Switchboard', version: '3.0.0' };

const INSTRUCTIONS =
  'Switchboard sends and reads chat-network (WhatsApp) messages for a workspace. Start with list_connections to find a CONNECTED connection; ' +
  'send with send_message (text, media by URL, location, …) or, for a local file, prepare_media_upload; read with list_chats and list_messages. ' +
  'Sending is asynchronous: a message is PENDING until the network takes it.';

/**
 * One MCP server for one request (the endpoint is stateless): every tool offered, each run as
 * `context.actor`. Failures come back as tool results with `isError: true`.
 *
 * The SDK's low-level `Server`: its high-level `McpServer` takes zod shapes only, while a tool
 * here declares its arguments in TypeBox (tool.ts), which is JSON Schema and is advertised as is.
 * `tools.listChanged` is false: this server never sends `notifications/tools/list_changed`, the
 * endpoint being stateless (no stream to send it on) and the tool list fixed while the process
 * runs (plugins are chosen at start).
 */
export function createMcpServer(tools: readonly McpToolDefinition[], context: McpToolContext): Server {
  const server = new Server(MCP_SERVER_INFO, { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS });
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tools.map(advertised) }));
  server.setRequestHandler(CallToolRequestSchema, async ({ params }) => {
    const tool = byName.get(params.name);
    // As the SDK's McpServer answers: a tool result with the protocol error's text, not a JSON-RPC error.
    if (!tool) return protocolFailure(`Tool ${params.name} not found`);
    const problems = inputProblems(tool, params.arguments ?? {});
    if (problems) return protocolFailure(`Input validation error: Invalid arguments for tool ${tool.name}: ${problems}`);
    return runTool(tool, Value.Clean(tool.input, params.arguments ?? {}), context);
  });
  return server;
}

/** Runs one tool: scope check (again: the endpoint checked before the transport), then the tool. */
export async function runTool(tool: McpToolDefinition, input: unknown, context: McpToolContext): Promise<CallToolResult> {
  const { scopes } = context.actor;
  if (scopes !== undefined && !satisfies(scopes, tool.scopes)) {
    return failure('insufficient_scope', 403, `The tool ${tool.name} needs the scope ${tool.scopes[0]}; this token was not granted it`);
  }
  try {
    return success(await tool.run(input as never, context));
  } catch (error) {
    if (error instanceof DomainError) return domainFailure(error);
    context.ctx.log.error({ tool: tool.name, workspaceId: context.actor.workspaceId, error: errorField(error, true) }, 'MCP tool failed');
    return failure('INTERNAL_ERROR', 500, 'Internal server error');
  }
}

/** A tool as `tools/list` shows it: the input schema is the tool's TypeBox schema, which is JSON Schema. */
function advertised(tool: McpToolDefinition): Tool {
  return { name: tool.name, title: tool.title, description: tool.description, inputSchema: tool.input as Tool['inputSchema'], annotations: tool.annotations };
}

/** Every broken rule of the arguments, or undefined when they fit the tool's schema. */
function inputProblems(tool: McpToolDefinition, input: unknown): string | undefined {
  const check = checkerOf(tool.input);
  if (check.Check(input)) return undefined;
  return [...check.Errors(input)].map((error) => `${error.path || '/'}: ${error.message}`).join('; ');
}

/** Each schema is compiled once for the process; a server is built per request. */
const checkers = new WeakMap<TObject, TypeCheck<TObject>>();

function checkerOf(schema: TObject): TypeCheck<TObject> {
  let check = checkers.get(schema);
  if (!check) checkers.set(schema, (check = TypeCompiler.Compile(schema)));
  return check;
}

function success(result: McpToolResult): CallToolResult {
  // The JSON text is what clients that ignore structuredContent show the model (MCP "structured content").
  const json = { type: 'text' as const, text: JSON.stringify(result.structured, null, 2) };
  return {
    content: result.summary ? [{ type: 'text', text: result.summary }, json] : [json],
    structuredContent: result.structured,
  };
}

/** Codes of the standard error shape, where the domain gives none. */
const STATUS_CODES: Record<number, string> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'UNPROCESSABLE_ENTITY',
  429: 'TOO_MANY_REQUESTS',
};

/** A DomainError as the tool's answer: the machine code (coded errors) or one from the status, and the message. */
function domainFailure(error: DomainError): CallToolResult {
  const status = httpStatusOf(error);
  if (error.shape === 'coded') return failure(error.message, status, error.hint || error.message);
  const own = (error as { code?: unknown }).code;
  const code = typeof own === 'string' ? own : STATUS_CODES[status] ?? 'ERROR';
  return failure(code, status, error.message, error.messages);
}

/** A failure the protocol names (unknown tool, arguments the schema refuses): the SDK's wording, no error shape. */
function protocolFailure(message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: new McpError(ErrorCode.InvalidParams, message).message }] };
}

function failure(code: string, status: number, message: string, details?: string[]): CallToolResult {
  return {
    isError: true,
    content: [{ type: 'text', text: `${code}: ${message}` }],
    structuredContent: { error: { code, status, message, ...(details && details.length > 1 && { details }) } },
  };
}

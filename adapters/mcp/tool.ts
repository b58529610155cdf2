import type { Static, TObject } from '@sinclair/typebox';
import type { Actor } from '../../core/identity/identity.ts';
import type { Scope } from '../../core/oauth/scopes.ts';
import type { AppContext } from '../http/context.ts';

/**
 * A tool's arguments: a TypeBox object schema, as the routes declare their bodies (`t` of
 * Elysia). A TypeBox schema is JSON Schema: the tool list advertises it as it is, and where a
 * tool takes what a route takes it uses the route's very schema (adapters/http/send-body.ts).
 */
export type McpToolInput = TObject;

/** Who runs the tool, and with what: the caller as authenticated, and the app's context. */
export interface McpToolContext {
  actor: Actor;
  ctx: AppContext;
}

/** What a tool answers: the data (`structuredContent`) and, optionally, a one-line summary for people. */
export interface McpToolResult {
  structured: Record<string, unknown>;
  summary?: string;
}

/**
 * A tool of the MCP endpoint (`/v3/mcp`). Base tools and plugin tools (`Plugin.mcpTools`) are
 * the same thing: the registry offers every base tool and the tools of every enabled plugin.
 *
 * `run` calls core use cases as `context.actor`, so the roles matrix applies; it throws a
 * `DomainError` for expected failures, which the caller sees as a tool result with
 * `isError: true` and the error's code and message (never as a transport failure).
 */
export interface McpToolDefinition<Input extends McpToolInput = McpToolInput> {
  /** snake_case, unique across the base and every plugin. */
  name: string;
  title?: string;
  /** What the tool does and when to use it, written for the assistant that picks tools. */
  description: string;
  /**
   * OAuth scopes (spec 2.7) that cover the tool: a bearer token needs any one of them (its
   * implied scopes count). The first is the one a scope challenge names. API keys need none.
   */
  scopes: readonly [Scope, ...Scope[]];
  /** The arguments, checked before `run` (server.ts); their descriptions reach the assistant. */
  input: Input;
  annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint?: boolean };
  run(input: Static<Input>, context: McpToolContext): Promise<McpToolResult>;
}

/** Declares a tool with its argument types inferred from `input`. */
export function defineTool<Input extends McpToolInput>(tool: McpToolDefinition<Input>): McpToolDefinition<Input> {
  return tool;
}

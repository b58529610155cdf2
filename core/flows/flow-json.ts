import { badRequest, unprocessable } from '../shared/errors.ts';

/**
 * Flow JSON checks before it goes to the platform (spec 4.3 "Flow kinds"):
 *
 * - `navigate`: the screens are fixed in the Flow JSON; only the format is checked, no key.
 * - `data_exchange`: the service's endpoint answers each step; the Flow JSON needs
 *   `data_api_version: "3.0"` and a `routing_model`, and the Flow's `endpointUri` must be the
 *   connection's `dataExchangeUrl` (set when left out), which needs the encryption key.
 *
 * Every problem is reported at once (400 with one message per broken rule). The platform
 * checks the components itself and answers `validation_errors`.
 */
export type FlowKind = 'navigate' | 'data_exchange';

export const DATA_API_VERSION = '3.0';
/** Screen ids: letters and underscores (the platform's rule). */
const SCREEN_ID = /^[A-Za-z_]+$/;

export interface CheckedFlowJson {
  kind: FlowKind;
  flowJson: Record<string, unknown>;
  /** Only for `data_exchange`: the endpoint the platform calls. */
  endpointUri?: string;
}

/** `flowJson` as given: an object, or a string holding one. */
export function parseFlowJson(input: unknown): Record<string, unknown> {
  let value = input;
  if (typeof input === 'string') {
    try {
      value = JSON.parse(input);
    } catch {
      throw badRequest(['body.flowJson is a string but not JSON']);
    }
  }
  if (!isObject(value)) throw badRequest(['body.flowJson must be a JSON object (or a string holding one)']);
  return value;
}

/**
 * Checks a Flow JSON and decides its kind. `dataExchangeUrl` is the connection's endpoint, or
 * null when no encryption key is provisioned; `endpointUri` is what the request asked for.
 */
export function checkFlowJson(flowJson: Record<string, unknown>, options: { endpointUri?: string; dataExchangeUrl: string | null }): CheckedFlowJson {
  const problems: string[] = [];
  if (typeof flowJson.version !== 'string' || !/^\d+\.\d+$/.test(flowJson.version)) problems.push('flowJson.version must be a Flow JSON version string such as "7.2"');
  const screens = Array.isArray(flowJson.screens) ? flowJson.screens : undefined;
  const ids: string[] = [];
  if (!screens || screens.length === 0) problems.push('flowJson.screens must be a non-empty array');
  else
    screens.forEach((screen, i) => {
      if (!isObject(screen)) return problems.push(`flowJson.screens.${i} must be an object`);
      if (typeof screen.id !== 'string' || !SCREEN_ID.test(screen.id)) problems.push(`flowJson.screens.${i}.id must be letters and underscores`);
      else if (ids.includes(screen.id)) problems.push(`flowJson.screens.${i}.id ${screen.id} is used twice`);
      else ids.push(screen.id);
      if (!isObject(screen.layout) || typeof screen.layout.type !== 'string' || !Array.isArray(screen.layout.children)) {
        problems.push(`flowJson.screens.${i}.layout must be an object with a type and children`);
      }
    });

  const dataExchange = flowJson.data_api_version !== undefined || flowJson.routing_model !== undefined;
  if (!dataExchange) {
    if (options.endpointUri !== undefined) problems.push('body.endpointUri is only for data_exchange Flows (with data_api_version and routing_model)');
    if (problems.length > 0) throw badRequest(problems);
    return { kind: 'navigate', flowJson };
  }

  if (flowJson.data_api_version !== DATA_API_VERSION) problems.push(`flowJson.data_api_version must be "${DATA_API_VERSION}" for a data_exchange Flow`);
  problems.push(...routingModelProblems(flowJson.routing_model, ids));
  if (options.dataExchangeUrl !== null && options.endpointUri !== undefined && options.endpointUri !== options.dataExchangeUrl) {
    problems.push(`body.endpointUri must be the connection's dataExchangeUrl (${options.dataExchangeUrl})`);
  }
  if (problems.length > 0) throw badRequest(problems);
  if (options.dataExchangeUrl === null) {
    throw unprocessable('A data_exchange Flow needs the connection’s Flow encryption key: PUT /v3/connections/{id}/flows-encryption first');
  }
  return { kind: 'data_exchange', flowJson, endpointUri: options.dataExchangeUrl };
}

/** `routing_model`: screen id → the screen ids it may go to, every one a screen of the Flow. */
function routingModelProblems(model: unknown, ids: readonly string[]): string[] {
  if (!isObject(model)) return ['flowJson.routing_model must be an object (screen id → the screens it leads to) for a data_exchange Flow'];
  const problems: string[] = [];
  for (const [from, targets] of Object.entries(model)) {
    if (ids.length > 0 && !ids.includes(from)) problems.push(`flowJson.routing_model.${from} is not a screen of the Flow`);
    if (!Array.isArray(targets) || !targets.every((t) => typeof t === 'string')) problems.push(`flowJson.routing_model.${from} must be an array of screen ids`);
    else for (const to of targets) if (ids.length > 0 && !ids.includes(to)) problems.push(`flowJson.routing_model.${from} leads to ${to}, not a screen of the Flow`);
  }
  return problems;
}

function isObject(value: unknown): value is Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

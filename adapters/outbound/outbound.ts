import { lookup } from 'node:dns/promises';
import { hostAllowed, inCidr, parseAddress, resolvedRefusal, urlVerdict, type OutboundAllowList, type OutboundPolicy } from '../../core/shared/outbound-policy.ts';
import { joinChunks } from '../http/body.ts';

/** Every address a name has now (the resolver port; tests inject one to play DNS rebinding). */
export type Resolve = (host: string) => Promise<string[]>;

export const systemResolve: Resolve = async (host) => (await lookup(host, { all: true })).map((a) => a.address);

/** The policy refused the URL (or a redirect's target, or the address its name has now): no request was sent. */
export class OutboundRefusal extends Error {
  override name = 'OutboundRefusal';
}

export interface OutboundInit extends Omit<RequestInit, 'redirect'> {
  /** Redirects followed, each target checked like the first URL (default 0: a 3xx is the answer). */
  followRedirects?: number;
}

/** The one way the service calls a customer's URL: the policy's check at creation, and its fetch. */
export interface Outbound extends OutboundPolicy {
  /** Throws `OutboundRefusal` before connecting when the policy refuses; otherwise as `fetch`. */
  fetch(url: string, init?: OutboundInit): Promise<Response>;
  /** The host (a name or an address literal) is one `OUTBOUND_ALLOW` exempts: the self-hoster's own network. */
  exempts(host: string): boolean;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export function createOutbound(allow: OutboundAllowList, resolve: Resolve = systemResolve): Outbound {
  return {
    exempts(host) {
      const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
      const address = parseAddress(bare);
      return address ? allow.ranges.some((cidr) => inCidr(address, cidr)) : hostAllowed(bare, allow);
    },

    async refusal(url) {
      const verdict = urlVerdict(url, allow);
      if ('refusal' in verdict) return verdict.refusal;
      if (verdict.resolve === undefined) return undefined;
      let addresses: string[];
      try {
        addresses = await resolve(verdict.resolve);
      } catch {
        // A name that does not resolve yet (a receiver still being set up) is accepted: every
        // connection checks the address it resolves to then.
        return undefined;
      }
      return resolvedRefusal(verdict.resolve, addresses, allow);
    },

    async fetch(url, init = {}) {
      const { followRedirects = 0, ...first } = init;
      let current = url;
      let request: RequestInit = first;
      for (let hop = 0; ; hop++) {
        const response = await pinnedFetch(current, request);
        const location = response.headers.get('location');
        if (!REDIRECTS.has(response.status) || !location || hop >= followRedirects) return response;
        await response.body?.cancel().catch(() => {});
        current = new URL(location, current).href;
        const method = (request.method ?? 'GET').toUpperCase();
        if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === 'POST')) {
          request = { ...request, method: 'GET', body: undefined };
        }
      }
    },
  };

  /**
   * Resolves, checks every address, and connects to the address it checked: fetch does not look the
   * name up again, so a name that answers a public address to the check and a private one to the
   * connection (DNS rebinding) reaches nothing. TLS still verifies the certificate against the name
   * (`tls.serverName`), and the Host header carries the name.
   */
  async function pinnedFetch(url: string, init: RequestInit): Promise<Response> {
    const verdict = urlVerdict(url, allow);
    if ('refusal' in verdict) throw new OutboundRefusal(verdict.refusal);
    if (verdict.resolve === undefined) return fetch(verdict.url, { ...init, redirect: 'manual' });
    const host = verdict.resolve;
    const addresses = await resolve(host);
    if (addresses.length === 0) throw new Error(`${host} has no address`);
    const reason = resolvedRefusal(host, addresses, allow);
    if (reason) throw new OutboundRefusal(reason);
    // IPv4 first: a host without an IPv6 route still reaches a dual-stack receiver.
    const address = addresses.find((a) => !a.includes(':')) ?? addresses[0]!;
    const target = new URL(verdict.url);
    target.hostname = address.includes(':') ? `[${address}]` : address;
    const headers = new Headers(init.headers);
    headers.set('host', verdict.url.host);
    return fetch(target, {
      ...init,
      headers,
      redirect: 'manual',
      ...(verdict.url.protocol === 'https:' && { tls: { ...(init as { tls?: object }).tls, serverName: verdict.url.hostname } }),
    });
  }
}

/** The answer's body, refused past `maxBytes` (read as it streams: an endless answer stops there). */
export async function readBounded(response: Response, maxBytes: number): Promise<Uint8Array> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => {});
    throw new Error(`the answer is larger than ${maxBytes} bytes`);
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = response.body?.getReader();
  while (reader) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw new Error(`the answer is larger than ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  return joinChunks(chunks, total);
}

/**
 * The outbound URL policy: which URLs the service may call on a customer's behalf (webhooks of
 * every kind, the API channel, agent bots, media URLs, AI endpoints). Pure: it parses and decides;
 * resolving names and connecting is the adapter's (adapters/outbound/), behind `OutboundPolicy`.
 *
 * Refused by default: any scheme but http(s), credentials in the URL, names that only mean
 * something inside a network (`localhost`, `*.internal`, `*.local`, ...), and every address that is
 * not public unicast (loopback, private, CGNAT, link-local, ULA, multicast, reserved), in any
 * spelling a URL parser or a resolver accepts (`2130706433`, `0x7f.1`, `0177.0.0.1`, `127.1`,
 * `[::ffff:127.0.0.1]`). `OUTBOUND_ALLOW` exempts hostnames, addresses and CIDRs.
 */

import { badRequest } from './errors.ts';

export type IpAddress = { version: 4; value: number } | { version: 6; value: bigint };

/** The port core use cases call when a URL is created or updated: why it is refused, if it is. */
export interface OutboundPolicy {
  refusal(url: string): Promise<string | undefined>;
}

/** What `OUTBOUND_ALLOW` exempts: exact hostnames, `*.suffix` hostnames, and address ranges. */
export interface OutboundAllowList {
  hosts: ReadonlySet<string>;
  /** From `*.example.org`: the dotted suffix `.example.org`. */
  suffixes: readonly string[];
  ranges: readonly Cidr[];
}

export interface Cidr {
  address: IpAddress;
  bits: number;
}

export const NOTHING_ALLOWED: OutboundAllowList = { hosts: new Set(), suffixes: [], ranges: [] };

/** The 400 problem for a refused URL, naming the rule. */
export function outboundProblem(field: string, reason: string): string {
  return `${field} is refused by the outbound policy: ${reason}; see OUTBOUND_ALLOW`;
}

/** 400 naming the rule when the policy refuses `url` (use cases call this once their syntax checks passed). */
export async function assertOutboundAllowed(policy: OutboundPolicy, field: string, url: string): Promise<void> {
  const reason = await policy.refusal(url);
  if (reason !== undefined) throw badRequest([outboundProblem(field, reason)]);
}

// ---------------------------------------------------------------- addresses

/**
 * An IPv4 address as inet_aton and the WHATWG URL parser read it: one to four parts, each decimal,
 * `0x` hex or `0` octal, the last part filling the remaining bytes (`127.1`, `2130706433`).
 */
export function parseIPv4(text: string): number | undefined {
  const parts = text.split('.');
  if (parts.length > 1 && parts[parts.length - 1] === '') parts.pop(); // a trailing dot
  if (parts.length < 1 || parts.length > 4) return undefined;
  const numbers: number[] = [];
  for (const part of parts) {
    let n: number;
    if (/^0x[0-9a-f]*$/i.test(part)) n = part.length === 2 ? 0 : parseInt(part.slice(2), 16);
    else if (/^0[0-7]+$/.test(part)) n = parseInt(part.slice(1), 8);
    else if (/^(0|[1-9][0-9]*)$/.test(part)) n = Number(part);
    else return undefined;
    if (!Number.isFinite(n)) return undefined;
    numbers.push(n);
  }
  const last = numbers.pop()!;
  if (numbers.some((n) => n > 255) || last >= 256 ** (4 - numbers.length)) return undefined;
  let value = 0;
  numbers.forEach((n, i) => (value += n * 256 ** (3 - i)));
  return value + last;
}

/** An IPv6 address (`::`, a trailing dotted IPv4, no zone id), as a 128-bit number. */
export function parseIPv6(text: string): bigint | undefined {
  if (!/^[0-9a-f:.]+$/i.test(text) || text.split('::').length > 2) return undefined;
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const groups = (side: string): number[] | undefined => {
    if (side === '') return [];
    const out: number[] = [];
    const pieces = side.split(':');
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i]!;
      if (i === pieces.length - 1 && piece.includes('.')) {
        if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(piece)) return undefined;
        const octets = piece.split('.').map(Number);
        if (octets.some((o) => o > 255)) return undefined;
        out.push(octets[0]! * 256 + octets[1]!, octets[2]! * 256 + octets[3]!);
      } else if (/^[0-9a-f]{1,4}$/i.test(piece)) out.push(parseInt(piece, 16));
      else return undefined;
    }
    return out;
  };
  const left = groups(head!);
  const right = tail === undefined ? [] : groups(tail);
  if (!left || !right) return undefined;
  if (tail === undefined ? left.length !== 8 : left.length + right.length > 7) return undefined;
  const all = [...left, ...Array(8 - left.length - right.length).fill(0), ...right];
  return all.reduce((acc, g) => (acc << 16n) | BigInt(g), 0n);
}

/** An address literal, with or without the URL's brackets around IPv6. */
export function parseAddress(text: string): IpAddress | undefined {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  if (bare.includes(':')) {
    const value = parseIPv6(bare);
    return value === undefined ? undefined : { version: 6, value };
  }
  const value = parseIPv4(bare);
  return value === undefined ? undefined : { version: 4, value };
}

export function formatAddress(address: IpAddress): string {
  if (address.version === 4) return [24, 16, 8, 0].map((shift) => (address.value >>> shift) & 255).join('.');
  const groups = Array.from({ length: 8 }, (_, i) => Number((address.value >> BigInt(112 - 16 * i)) & 0xffffn));
  let best = { start: -1, length: 1 };
  for (let i = 0; i < 8; i++) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > best.length) best = { start: i, length: j - i };
  }
  const hex = (list: number[]) => list.map((g) => g.toString(16)).join(':');
  if (best.start < 0) return hex(groups);
  return `${hex(groups.slice(0, best.start))}::${hex(groups.slice(best.start + best.length))}`;
}

export function parseCidr(text: string): Cidr | undefined {
  const [host, bitsText, extra] = text.split('/');
  if (extra !== undefined || host === undefined) return undefined;
  // Entries are written as people write addresses: dotted quads, not inet_aton's short forms.
  const address = host.includes(':') ? parseAddress(host) : /^\d{1,3}(\.\d{1,3}){3}$/.test(host) ? parseAddress(host) : undefined;
  if (!address) return undefined;
  const max = address.version === 4 ? 32 : 128;
  if (bitsText === undefined) return { address, bits: max };
  if (!/^\d{1,3}$/.test(bitsText) || Number(bitsText) > max) return undefined;
  return { address, bits: Number(bitsText) };
}

export function inCidr(address: IpAddress, cidr: Cidr): boolean {
  if (address.version !== cidr.address.version) return false;
  if (address.version === 4) {
    if (cidr.bits === 0) return true;
    const shift = 32 - cidr.bits;
    return Math.floor(address.value / 2 ** shift) === Math.floor((cidr.address.value as number) / 2 ** shift);
  }
  const shift = BigInt(128 - cidr.bits);
  return address.value >> shift === (cidr.address.value as bigint) >> shift;
}

/** Ranges that are never a public service, with the words a refusal uses. Order: most specific first. */
const REFUSED_V4: readonly [string, string][] = [
  ['0.0.0.0/8', '"this network"'],
  ['10.0.0.0/8', 'private network'],
  ['100.64.0.0/10', 'shared address space (carrier-grade NAT)'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local, cloud metadata'],
  ['172.16.0.0/12', 'private network'],
  ['192.0.0.0/24', 'IETF protocol assignments'],
  ['192.0.2.0/24', 'documentation'],
  ['192.88.99.0/24', '6to4 relay anycast'],
  ['192.168.0.0/16', 'private network'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation'],
  ['203.0.113.0/24', 'documentation'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved, broadcast'],
];
const REFUSED_V6: readonly [string, string][] = [
  ['::1/128', 'loopback'],
  ['::/128', 'unspecified address'],
  ['::/96', 'IPv4-compatible (deprecated)'],
  ['64:ff9b:1::/48', 'local-use NAT64'],
  ['100::/64', 'discard-only'],
  ['2001::/32', 'Teredo tunnelling'],
  ['2001:db8::/32', 'documentation'],
  ['fc00::/7', 'unique local (private network)'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'site-local (deprecated)'],
  ['ff00::/8', 'multicast'],
];
const compile = (rows: readonly [string, string][]) => rows.map(([text, label]) => ({ cidr: parseCidr(text)!, text, label }));
const REFUSED_RANGES = [...compile(REFUSED_V4), ...compile(REFUSED_V6)];
const GLOBAL_UNICAST_V6 = parseCidr('2000::/3')!;
/** IPv6 prefixes that carry an IPv4 address: the IPv4 address decides. */
const IPV4_MAPPED = parseCidr('::ffff:0:0/96')!;
const NAT64 = parseCidr('64:ff9b::/96')!;
const SIX_TO_FOUR = parseCidr('2002::/16')!;

/** The IPv4 address an IPv6 address stands for (mapped, NAT64, 6to4), if any. */
function embeddedIPv4(address: IpAddress): IpAddress | undefined {
  if (address.version !== 6) return undefined;
  if (inCidr(address, IPV4_MAPPED) || inCidr(address, NAT64)) return { version: 4, value: Number(address.value & 0xffffffffn) };
  if (inCidr(address, SIX_TO_FOUR)) return { version: 4, value: Number((address.value >> 80n) & 0xffffffffn) };
  return undefined;
}

function allowedAddress(address: IpAddress, allow: OutboundAllowList): boolean {
  return allow.ranges.some((cidr) => inCidr(address, cidr));
}

/** The refused range this address is in (`10.0.0.0/8 (private network)`), or undefined when it is public or allowed. */
export function refusedRange(address: IpAddress, allow: OutboundAllowList = NOTHING_ALLOWED): string | undefined {
  if (allowedAddress(address, allow)) return undefined;
  const inner = embeddedIPv4(address);
  if (inner) {
    const range = refusedRange(inner, allow);
    return range && `${range} via ${formatAddress(address)}`;
  }
  const range = REFUSED_RANGES.find((r) => inCidr(address, r.cidr));
  if (range) return `${range.text} (${range.label})`;
  if (address.version === 6 && !inCidr(address, GLOBAL_UNICAST_V6)) return 'a reserved IPv6 range (outside 2000::/3, global unicast)';
  return undefined;
}

/** Why this address is refused, naming the range, or undefined when it is public or allowed. */
export function addressRefusal(address: IpAddress, allow: OutboundAllowList = NOTHING_ALLOWED): string | undefined {
  const range = refusedRange(address, allow);
  return range && `${range} is not reachable from this service`;
}

// ---------------------------------------------------------------- names and URLs

/** Names that only mean something inside a network or on this machine. */
const INTERNAL_SUFFIXES = ['.internal', '.local', '.localdomain', '.home.arpa', '.lan', '.intranet', '.corp'];

export function hostAllowed(host: string, allow: OutboundAllowList): boolean {
  return allow.hosts.has(host) || allow.suffixes.some((suffix) => host.endsWith(suffix));
}

/**
 * What the URL asks for before any name is resolved: a refusal, or the host to resolve (undefined
 * when nothing is left to check: an address literal or a name `OUTBOUND_ALLOW` exempts).
 */
export function urlVerdict(value: string, allow: OutboundAllowList = NOTHING_ALLOWED): { refusal: string } | { resolve: string | undefined; url: URL } {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { refusal: 'it is not an absolute URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { refusal: `only http and https URLs are called, not ${url.protocol.replace(/:$/, '')}` };
  if (url.username || url.password) return { refusal: 'a user name or password in the URL is not sent (put credentials in a secret or header field)' };
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  if (host === '') return { refusal: 'the URL has no host' };
  if (hostAllowed(host, allow)) return { resolve: undefined, url };
  const literal = parseAddress(host);
  if (literal) {
    const reason = addressRefusal(literal, allow);
    return reason ? { refusal: reason } : { resolve: undefined, url };
  }
  if (host === 'localhost' || host.endsWith('.localhost')) {
    // The loopback name: as reachable as the loopback addresses are.
    const reason = addressRefusal({ version: 4, value: 0x7f000001 }, allow);
    return reason ? { refusal: `${host} is loopback, and ${reason}` } : { resolve: undefined, url };
  }
  const suffix = INTERNAL_SUFFIXES.find((s) => host.endsWith(s));
  if (suffix) return { refusal: `*${suffix} names are not reachable from this service` };
  if (!host.includes('.')) return { refusal: `${host} is a single-label name, not reachable from this service` };
  return { resolve: host, url };
}

/** Why the addresses a name resolved to are refused (any one refused refuses the name). */
export function resolvedRefusal(host: string, addresses: readonly string[], allow: OutboundAllowList = NOTHING_ALLOWED): string | undefined {
  for (const text of addresses) {
    const address = parseAddress(text);
    if (!address) return `${host} resolves to something that is not an address`;
    const range = refusedRange(address, allow);
    if (range) return `${host} resolves to an address in ${range}, which is not reachable from this service`;
  }
  return undefined;
}

/**
 * `OUTBOUND_ALLOW`: comma-separated hostnames (`hooks.corp.example`, `*.corp.example`), addresses
 * (`10.1.2.3`, `::1`) and CIDRs (`10.0.0.0/8`, `fd00::/8`). Unreadable entries are problems.
 */
export function parseAllowList(text: string | undefined): { allow: OutboundAllowList; problems: string[] } {
  const hosts = new Set<string>();
  const suffixes: string[] = [];
  const ranges: Cidr[] = [];
  const problems: string[] = [];
  for (const raw of (text ?? '').split(',')) {
    const entry = raw.trim().toLowerCase();
    if (entry === '') continue;
    const cidr = parseCidr(entry.startsWith('[') ? entry.replace(/^\[|\](?=\/|$)/g, '') : entry);
    if (cidr) ranges.push(cidr);
    else if (/^\*\.([a-z0-9-]+\.)*[a-z0-9-]+$/.test(entry)) suffixes.push(entry.slice(1));
    else if (/^([a-z0-9-]+\.)*[a-z0-9-]+$/.test(entry) && !/^[0-9.]+$/.test(entry) && !/^0x/.test(entry)) hosts.add(entry);
    else problems.push(`"${raw.trim()}" is not a hostname, an IP address or a CIDR`);
  }
  return { allow: { hosts, suffixes, ranges }, problems };
}

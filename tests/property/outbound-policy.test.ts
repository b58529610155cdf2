import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { addressRefusal, formatAddress, parseAddress, parseAllowList, parseIPv4, resolvedRefusal, urlVerdict } from '../../core/shared/outbound-policy.ts';

/**
 * Issue 19, section 1: "By default refuse: loopback (127.0.0.0/8, ::1), 0.0.0.0/8, 10/8, 172.16/12,
 * 192.168/16, 100.64/10, link-local 169.254/16 and fe80::/10, fc00::/7, multicast, numeric and mixed
 * encodings of those, hostnames that resolve to them, and any scheme but http(s)."
 */

const refusal = (url: string, allow?: string) => {
  const verdict = urlVerdict(url, allow === undefined ? undefined : parseAllowList(allow).allow);
  return 'refusal' in verdict ? verdict.refusal : undefined;
};

/** A reference written from the RFC 6890 table by octets, far simpler than the policy's CIDR table. */
function refusedByReference(a: number, b: number, c: number): boolean {
  return (
    a === 0 ||
    a === 10 ||
    (a === 100 && b >= 64 && b <= 127) ||
    a === 127 ||
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 0 && (c === 0 || c === 2)) ||
    (a === 192 && b === 88 && c === 99) ||
    (a === 192 && b === 168) ||
    (a === 198 && (b === 18 || b === 19)) ||
    (a === 198 && b === 51 && c === 100) ||
    (a === 203 && b === 0 && c === 113) ||
    a >= 224
  );
}

const octet = fc.integer({ min: 0, max: 255 });
/** Addresses anywhere, and addresses at and around the edges of the refused ranges. */
const ipv4 = fc.oneof(
  fc.tuple(octet, octet, octet, octet),
  fc.tuple(fc.constantFrom(0, 10, 100, 127, 169, 172, 192, 198, 203, 223, 224, 239, 240, 255), octet, octet, octet),
  fc.tuple(fc.constantFrom(100, 172, 192, 198), fc.constantFrom(0, 15, 16, 17, 18, 19, 20, 31, 32, 51, 63, 64, 88, 127, 128, 168, 254), fc.constantFrom(0, 1, 2, 99, 100, 113), octet),
);

/** Every spelling of one address a URL parser or inet_aton accepts. */
function spellings([a, b, c, d]: [number, number, number, number]): string[] {
  const n = ((a << 24) >>> 0) + (b << 16) + (c << 8) + d;
  return [
    `${a}.${b}.${c}.${d}`,
    String(n),
    `0x${n.toString(16)}`,
    [a, b, c, d].map((o) => `0${o.toString(8)}`).join('.'),
    `0x${a.toString(16)}.${b}.${(c << 8) + d}`,
    `${a}.${(b << 16) + (c << 8) + d}`,
    `[::ffff:${a}.${b}.${c}.${d}]`,
    `[::ffff:${((a << 8) + b).toString(16)}:${((c << 8) + d).toString(16)}]`,
    `[64:ff9b::${a}.${b}.${c}.${d}]`,
  ];
}

describe('outbound policy: addresses', () => {
  test('every spelling of a random IPv4 address is refused exactly when the reference refuses it', () => {
    fc.assert(
      fc.property(ipv4, (address) => {
        const expected = refusedByReference(address[0], address[1], address[2]);
        for (const host of spellings(address)) {
          const reason = refusal(`http://${host}:8080/hook`);
          if ((reason !== undefined) !== expected) throw new Error(`${host} (${address.join('.')}): ${reason ?? 'allowed'}, expected ${expected ? 'refused' : 'allowed'}`);
        }
      }),
      { numRuns: 2000 },
    );
  });

  test.each([
    ['http://127.0.0.1/', '127.0.0.0/8 (loopback)'],
    ['http://[::1]/', '::1/128 (loopback)'],
    ['http://2130706433/', '127.0.0.0/8 (loopback)'],
    ['http://0x7f.1/', '127.0.0.0/8 (loopback)'],
    ['http://0177.0.0.1/', '127.0.0.0/8 (loopback)'],
    ['http://127.1/', '127.0.0.0/8 (loopback)'],
    ['http://[::ffff:127.0.0.1]/', '127.0.0.0/8 (loopback)'],
    ['http://[0:0:0:0:0:ffff:7f00:1]/', '127.0.0.0/8 (loopback)'],
    ['http://[2002:a9fe:a9fe::1]/', '169.254.0.0/16'],
    ['http://169.254.169.254/latest/meta-data/', '169.254.0.0/16 (link-local'],
    ['http://10.0.0.1/', '10.0.0.0/8 (private network)'],
    ['http://172.31.255.255/', '172.16.0.0/12 (private network)'],
    ['http://192.168.1.1/', '192.168.0.0/16 (private network)'],
    ['http://100.64.0.1/', '100.64.0.0/10'],
    ['http://0.0.0.0/', '0.0.0.0/8'],
    ['http://[::]/', '::/128'],
    ['http://255.255.255.255/', '240.0.0.0/4'],
    ['http://224.0.0.1/', '224.0.0.0/4 (multicast)'],
    ['http://[fe80::1]/', 'fe80::/10 (link-local)'],
    ['http://[fd00::1]/', 'fc00::/7'],
    ['http://[ff02::1]/', 'ff00::/8 (multicast)'],
    ['http://metadata.google.internal/', '*.internal names'],
    ['http://printer.local/', '*.local names'],
    ['http://localhost:3000/', 'localhost is loopback'],
    ['http://api.localhost/', 'api.localhost is loopback'],
    ['http://intranet/', 'single-label name'],
    ['ftp://files.example.com/', 'only http and https'],
    ['file:///etc/passwd', 'only http and https'],
    ['gopher://example.com/', 'only http and https'],
    ['http://user:pass@example.com/', 'user name or password'],
  ])('%s is refused, naming %s', (url, rule) => {
    expect(refusal(url)).toContain(rule);
  });

  test.each(['https://example.com/hook', 'http://8.8.8.8/', 'https://[2606:4700:4700::1111]/', 'http://93.184.216.34:8080/x', 'https://hooks.example.org./'])('%s is not refused', (url) => {
    expect(refusal(url)).toBeUndefined();
  });

  test('a name any of whose addresses is refused is refused; public addresses pass', () => {
    expect(resolvedRefusal('hooks.example.com', ['93.184.216.34', '10.1.2.3'])).toContain('hooks.example.com resolves to an address in 10.0.0.0/8');
    expect(resolvedRefusal('hooks.example.com', ['::ffff:169.254.169.254'])).toContain('169.254.0.0/16');
    expect(resolvedRefusal('hooks.example.com', ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'])).toBeUndefined();
  });

  test('inet_aton forms parse as resolvers read them; garbage does not', () => {
    expect(parseIPv4('127.1')).toBe(0x7f000001);
    expect(parseIPv4('0x7f.0.0.1')).toBe(0x7f000001);
    expect(parseIPv4('017700000001')).toBe(0x7f000001);
    for (const bad of ['256.1.1.1', '1.2.3.4.5', '1..2', '08.1.1.1', 'a.b.c.d', '4294967296']) expect(parseIPv4(bad)).toBeUndefined();
    expect(formatAddress(parseAddress('[2001:db8:0:0:1:0:0:1]')!)).toBe('2001:db8::1:0:0:1');
  });
});

describe('outbound policy: OUTBOUND_ALLOW', () => {
  test('a CIDR exempts the addresses in it, in every spelling, and nothing else', () => {
    expect(refusal('http://127.0.0.1:9/', '127.0.0.0/8')).toBeUndefined();
    expect(refusal('http://2130706433/', '127.0.0.0/8')).toBeUndefined();
    expect(refusal('http://localhost:9/', '127.0.0.0/8')).toBeUndefined();
    expect(refusal('http://10.0.0.1/', '127.0.0.0/8')).toContain('10.0.0.0/8');
    expect(refusal('http://10.20.30.40/', '10.20.0.0/16')).toBeUndefined();
    expect(refusal('http://10.21.0.1/', '10.20.0.0/16')).toContain('10.0.0.0/8');
    expect(refusal('http://[fd12::5]/', 'fd12::/16')).toBeUndefined();
    expect(refusal('http://[::1]/', '[::1]')).toBeUndefined();
  });

  test('an IP exempts that address only', () => {
    expect(refusal('http://192.168.1.10/', '192.168.1.10')).toBeUndefined();
    expect(refusal('http://192.168.1.11/', '192.168.1.10')).toContain('192.168.0.0/16');
  });

  test('a hostname exempts that name (and *.suffix its subdomains), whatever it resolves to', () => {
    expect(refusal('http://hooks.corp.internal/', 'hooks.corp.internal')).toBeUndefined();
    expect(refusal('http://other.corp.internal/', 'hooks.corp.internal')).toContain('*.internal');
    expect(refusal('http://a.b.corp.internal/', '*.corp.internal')).toBeUndefined();
    expect(refusal('http://receiver:8080/', 'receiver')).toBeUndefined();
    const allow = parseAllowList('hooks.corp.example').allow;
    expect(resolvedRefusal('other.example', ['10.0.0.1'], allow)).toContain('10.0.0.0/8');
  });

  test('unreadable entries are problems; blanks are ignored', () => {
    expect(parseAllowList(' 127.0.0.0/8 , ,::1, *.corp.example ,hooks.example').problems).toEqual([]);
    const { problems } = parseAllowList('10.0.0.0/33,300.1.1.1,http://x.example,127.1,bad host');
    expect(problems).toHaveLength(5);
  });

  test('an exempted range lets exactly its addresses through, over the reference (random addresses and ranges)', () => {
    fc.assert(
      fc.property(ipv4, ipv4, fc.integer({ min: 0, max: 32 }), (range, address, bits) => {
        const allow = parseAllowList(`${range.join('.')}/${bits}`).allow;
        const value = (o: number[]) => ((o[0]! << 24) >>> 0) + (o[1]! << 16) + (o[2]! << 8) + o[3]!;
        const inside = bits === 0 || value(range) >>> (32 - bits) === value(address) >>> (32 - bits);
        const refused = addressRefusal(parseAddress(address.join('.'))!, allow) !== undefined;
        expect(refused).toBe(!inside && refusedByReference(address[0], address[1], address[2]));
      }),
      { numRuns: 2000 },
    );
  });
});

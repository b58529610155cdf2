import { expect, test } from 'bun:test';
import { ConfigError, loadConfig } from '../../apps/config.ts';
import { addressRefusal, parseAddress } from '../../core/shared/outbound-policy.ts';

/** Issue 19: "`OUTBOUND_ALLOW`: a comma-separated list of hostnames, IPs or CIDRs exempted", checked once at start. */

test('OUTBOUND_ALLOW is read at start: hostnames, IPs and CIDRs of both families', () => {
  const { outboundAllow } = loadConfig({ OUTBOUND_ALLOW: '127.0.0.0/8, ::1, 10.1.2.3, fd00::/8, hooks.corp.example, *.lan.example' });
  expect([...outboundAllow.hosts]).toEqual(['hooks.corp.example']);
  expect(outboundAllow.suffixes).toEqual(['.lan.example']);
  for (const address of ['127.9.9.9', '::1', '10.1.2.3', 'fd00::5']) expect(addressRefusal(parseAddress(address)!, outboundAllow)).toBeUndefined();
  expect(addressRefusal(parseAddress('10.1.2.4')!, outboundAllow)).toContain('10.0.0.0/8');
});

test('without OUTBOUND_ALLOW nothing is exempted', () => {
  const { outboundAllow } = loadConfig({});
  expect(outboundAllow.ranges).toEqual([]);
  expect(addressRefusal(parseAddress('127.0.0.1')!, outboundAllow)).toContain('loopback');
});

test('a bad entry stops the start with a message naming it', () => {
  expect(() => loadConfig({ OUTBOUND_ALLOW: '127.0.0.0/8,10.0.0.0/40' })).toThrow(ConfigError);
  expect(() => loadConfig({ OUTBOUND_ALLOW: 'http://hooks.example.com' })).toThrow('OUTBOUND_ALLOW must list hostnames, IP addresses or CIDRs separated by commas: "http://hooks.example.com" is not a hostname, an IP address or a CIDR');
});

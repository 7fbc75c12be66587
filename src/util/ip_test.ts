import assert from "node:assert/strict";
import {
  cidrContains,
  clientBucketId,
  formatIp,
  parseCidr,
  parseCidrList,
  parseForwardedIp,
  parseIp,
} from "./ip.ts";

const ip = (s: string) => {
  const a = parseIp(s);
  if (!a) throw new Error(`not parsed: ${s}`);
  return a;
};
const cidr = (s: string) => {
  const c = parseCidr(s);
  if (!c) throw new Error(`not parsed: ${s}`);
  return c;
};

Deno.test("ip: IPv4 and IPv6 forms, IPv4-mapped IPv6 as IPv4", () => {
  assert.equal(formatIp(ip("192.168.0.1")), "192.168.0.1");
  assert.equal(formatIp(ip("2001:db8::1")), "2001:db8:0:0:0:0:0:1");
  assert.equal(formatIp(ip("::")), "0:0:0:0:0:0:0:0");
  assert.equal(formatIp(ip("::1")), "0:0:0:0:0:0:0:1");
  assert.equal(formatIp(ip("fe80::1%eth0")), "fe80:0:0:0:0:0:0:1");
  assert.equal(formatIp(ip("[2001:DB8::A]")), "2001:db8:0:0:0:0:0:a");
  assert.equal(formatIp(ip("1:2:3:4:5:6:7:8")), "1:2:3:4:5:6:7:8");
  assert.equal(formatIp(ip("1:2:3:4:5:6:1.2.3.4")), "1:2:3:4:5:6:102:304");
  const mapped = ip("::ffff:10.1.2.3");
  assert.equal(mapped.version, 4);
  assert.equal(formatIp(mapped), "10.1.2.3");
  assert.equal(formatIp(ip("::ffff:a01:203")), "10.1.2.3", "the hex form of a mapped address too");
  for (
    const bad of [
      "",
      "1.2.3",
      "1.2.3.256",
      "01.2.3.4",
      "1.2.3.4.5",
      "1::2::3",
      ":1",
      "1:",
      "1:2:3:4:5:6:7:8:9",
      "1:2:3:4:5:6:7::8",
      "12345::",
      "g::1",
      "1.2.3.4::",
      "localhost",
      "unknown",
    ]
  ) assert.equal(parseIp(bad), undefined, bad);
});

Deno.test("ip: X-Forwarded-For entries may carry a port", () => {
  assert.equal(formatIp(parseForwardedIp(" 203.0.113.7:51234 ")!), "203.0.113.7");
  assert.equal(formatIp(parseForwardedIp("[2001:db8::1]:443")!), "2001:db8:0:0:0:0:0:1");
  assert.equal(formatIp(parseForwardedIp("2001:db8::1")!), "2001:db8:0:0:0:0:0:1");
  assert.equal(parseForwardedIp("203.0.113.7:"), undefined);
  assert.equal(parseForwardedIp("_hidden"), undefined);
});

Deno.test("cidr: IPv4 prefixes, bare addresses, bounds", () => {
  const net = cidr("10.0.0.0/8");
  assert.ok(cidrContains(net, ip("10.255.1.2")));
  assert.ok(!cidrContains(net, ip("11.0.0.1")));
  const odd = cidr("192.168.4.0/22");
  assert.ok(cidrContains(odd, ip("192.168.7.255")));
  assert.ok(!cidrContains(odd, ip("192.168.8.0")));
  assert.ok(!cidrContains(odd, ip("192.168.3.255")));
  assert.ok(cidrContains(cidr("127.0.0.1"), ip("127.0.0.1")));
  assert.ok(!cidrContains(cidr("127.0.0.1/32"), ip("127.0.0.2")));
  assert.ok(cidrContains(cidr("0.0.0.0/0"), ip("8.8.8.8")));
  assert.ok(!cidrContains(cidr("0.0.0.0/0"), ip("2001:db8::1")), "an IPv4 range never holds an IPv6 address");
  for (
    const bad of ["10.0.0.0/33", "10.0.0.0/", "10.0.0.0/-1", "10.0.0/8", "10.0.0.0/8/9", "::/129", "x/1"]
  ) {
    assert.equal(parseCidr(bad), undefined, bad);
  }
});

Deno.test("cidr: IPv6 prefixes, and IPv4-mapped addresses in IPv4 ranges", () => {
  const net = cidr("2001:db8:abcd::/48");
  assert.ok(cidrContains(net, ip("2001:db8:abcd:12::1")));
  assert.ok(!cidrContains(net, ip("2001:db8:abce::1")));
  const odd = cidr("fd00::/7");
  assert.ok(cidrContains(odd, ip("fc00::1")));
  assert.ok(cidrContains(odd, ip("fdff:ffff::1")));
  assert.ok(!cidrContains(odd, ip("fe00::1")));
  assert.ok(cidrContains(cidr("::1/128"), ip("::1")));
  assert.ok(!cidrContains(cidr("::1/128"), ip("127.0.0.1")), "IPv6 loopback is not 127.0.0.1");
  assert.ok(cidrContains(cidr("::/0"), ip("2001:db8::1")));
  // A dual-stack listener reports an IPv4 peer as ::ffff:a.b.c.d: IPv4 ranges hold it.
  assert.ok(cidrContains(cidr("127.0.0.1/32"), ip("::ffff:127.0.0.1")));
  assert.ok(cidrContains(cidr("10.0.0.0/8"), ip("::ffff:10.9.8.7")));
  // A range written in the mapped form is the IPv4 range it maps.
  const mappedRange = cidr("::ffff:10.0.0.0/104");
  assert.equal(mappedRange.version, 4);
  assert.equal(mappedRange.prefix, 8);
  assert.ok(cidrContains(mappedRange, ip("10.1.1.1")));
  assert.ok(cidrContains(cidr("[2001:db8::]/32"), ip("2001:db8:1::1")), "brackets are accepted");
});

Deno.test("cidr list: comma-separated, spaces and empty items ignored, the first bad item named", () => {
  assert.equal(parseCidrList("").length, 0);
  assert.equal(parseCidrList(" 10.0.0.0/8 , fd00::/8,,127.0.0.1 ").length, 3);
  assert.throws(() => parseCidrList("10.0.0.0/8, 300.0.0.0/8"), /300\.0\.0\.0\/8/);
});

Deno.test("client bucket: an IPv4 address, or the IPv6 /64", () => {
  assert.equal(clientBucketId(ip("203.0.113.7")), "203.0.113.7");
  assert.equal(clientBucketId(ip("::ffff:203.0.113.7")), "203.0.113.7");
  assert.equal(clientBucketId(ip("2001:db8:1:2:aaaa::1")), "2001:db8:1:2::/64");
  assert.equal(clientBucketId(ip("2001:db8:1:2:bbbb::9")), "2001:db8:1:2::/64");
  assert.notEqual(clientBucketId(ip("2001:db8:1:3::1")), clientBucketId(ip("2001:db8:1:2::1")));
});

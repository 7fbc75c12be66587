/**
 * Which IP addresses the page fetcher may connect to (spec §8.3 "names that resolve to a non-public address").
 *
 * Fail closed: an address string that does not parse strictly is not public. IPv6 is an allowlist
 * (only global unicast 2000::/3, minus the special ranges inside it), so every IPv4-mapped,
 * IPv4-compatible, NAT64, unique-local, link-local, site-local, multicast, loopback and unspecified
 * address is refused without being listed one by one. IPv4 is a blocklist of the IANA special-purpose
 * registry plus multicast, reserved and broadcast.
 */

/** Strict dotted-quad IPv4 (as a resolver returns it): four decimal octets, no leading zeros. */
export function parseIPv4(s: string): Uint8Array | undefined {
  const parts = s.split(".");
  if (parts.length !== 4) return undefined;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const p = parts[i]!;
    if (!/^(0|[1-9]\d{0,2})$/.test(p)) return undefined;
    const n = Number(p);
    if (n > 255) return undefined;
    out[i] = n;
  }
  return out;
}

/** Strict IPv6 text (RFC 4291 spec §2.2, with an optional trailing dotted IPv4); no zone id, no brackets. */
export function parseIPv6(s: string): Uint8Array | undefined {
  if (s.length === 0 || s.length > 45 || !/^[0-9a-fA-F:.]+$/.test(s)) return undefined;
  let text = s;
  let tail: Uint8Array | undefined;
  if (text.includes(".")) {
    const cut = text.lastIndexOf(":");
    if (cut < 0) return undefined;
    tail = parseIPv4(text.slice(cut + 1));
    if (!tail) return undefined;
    text = text.slice(0, cut + 1) + "0:0"; // placeholder groups, replaced below
  }
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const group = (g: string) => (/^[0-9a-fA-F]{1,4}$/.test(g) ? parseInt(g, 16) : -1);
  const left = halves[0] === "" ? [] : halves[0]!.split(":").map(group);
  const right = halves.length === 2 ? (halves[1] === "" ? [] : halves[1]!.split(":").map(group)) : [];
  if ([...left, ...right].some((g) => g < 0)) return undefined;
  let groups: number[];
  if (halves.length === 2) {
    const fill = 8 - left.length - right.length;
    if (fill < 1) return undefined;
    groups = [...left, ...new Array<number>(fill).fill(0), ...right];
  } else {
    if (left.length !== 8) return undefined;
    groups = left;
  }
  const out = new Uint8Array(16);
  groups.forEach((g, i) => {
    out[i * 2] = g >> 8;
    out[i * 2 + 1] = g & 0xff;
  });
  if (tail) out.set(tail, 12);
  return out;
}

interface Cidr {
  bytes: Uint8Array;
  bits: number;
  why: string;
}

function cidr(text: string, why: string): Cidr {
  const [addr, bits] = text.split("/") as [string, string];
  const bytes = addr.includes(":") ? parseIPv6(addr) : parseIPv4(addr);
  if (!bytes) throw new Error(`bad CIDR ${text}`);
  return { bytes, bits: Number(bits), why };
}

function inCidr(ip: Uint8Array, c: Cidr): boolean {
  if (ip.length !== c.bytes.length) return false;
  let bits = c.bits;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((ip[i]! & mask) !== (c.bytes[i]! & mask)) return false;
  }
  return true;
}

/** IPv4 ranges that are never a public web server. */
export const BLOCKED_IPV4: readonly Cidr[] = [
  cidr("0.0.0.0/8", "this network / unspecified"),
  cidr("10.0.0.0/8", "private"),
  cidr("100.64.0.0/10", "CGNAT shared address space"),
  cidr("127.0.0.0/8", "loopback"),
  cidr("169.254.0.0/16", "link-local (cloud metadata)"),
  cidr("172.16.0.0/12", "private"),
  cidr("192.0.0.0/24", "IETF protocol assignments"),
  cidr("192.0.2.0/24", "documentation TEST-NET-1"),
  cidr("192.31.196.0/24", "AS112"),
  cidr("192.52.193.0/24", "AMT"),
  cidr("192.88.99.0/24", "6to4 relay anycast"),
  cidr("192.168.0.0/16", "private"),
  cidr("192.175.48.0/24", "AS112 direct delegation"),
  cidr("198.18.0.0/15", "benchmarking"),
  cidr("198.51.100.0/24", "documentation TEST-NET-2"),
  cidr("203.0.113.0/24", "documentation TEST-NET-3"),
  cidr("224.0.0.0/4", "multicast"),
  cidr("240.0.0.0/4", "reserved and broadcast"),
];

/** Only global unicast is allowed for IPv6 … */
const IPV6_GLOBAL = cidr("2000::/3", "global unicast");
/** … minus these special ranges inside it. */
export const BLOCKED_IPV6_IN_GLOBAL: readonly Cidr[] = [
  cidr("2001::/23", "IETF protocol assignments (Teredo, benchmarking, ORCHID)"),
  cidr("2001:db8::/32", "documentation"),
  cidr("2002::/16", "6to4 (embeds an IPv4 address)"),
  cidr("3fff::/20", "documentation"),
];

/** Why an address is refused, or undefined when it is a public unicast address. */
export function nonPublicReason(ip: string): string | undefined {
  const v4 = parseIPv4(ip);
  if (v4) return BLOCKED_IPV4.find((c) => inCidr(v4, c))?.why;
  const v6 = parseIPv6(ip);
  if (!v6) return "not a strict IP address";
  if (!inCidr(v6, IPV6_GLOBAL)) return "IPv6 outside global unicast 2000::/3";
  return BLOCKED_IPV6_IN_GLOBAL.find((c) => inCidr(v6, c))?.why;
}

/** The production address policy: true only for a public unicast address. */
export function isPublicAddress(ip: string): boolean {
  return nonPublicReason(ip) === undefined;
}

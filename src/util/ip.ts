/**
 * IP addresses and CIDR ranges, IPv4 and IPv6, for the client-address rules (src/http/client_address.ts).
 * An IPv4-mapped IPv6 address (`::ffff:10.0.0.1`, what a dual-stack listener reports for an IPv4 peer)
 * is the IPv4 address it maps, both as an address and inside a range (`::ffff:10.0.0.0/104` = 10.0.0.0/8).
 */

export interface IpAddress {
  version: 4 | 6;
  /** 4 or 16 bytes, network order. */
  bytes: Uint8Array;
}

export interface Cidr {
  version: 4 | 6;
  bytes: Uint8Array;
  prefix: number;
}

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;
const HEX_GROUP = /^[0-9a-fA-F]{1,4}$/;

function parseV4(s: string): Uint8Array | undefined {
  const m = IPV4.exec(s);
  if (!m) return undefined;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const part = m[i + 1]!;
    if (part.length > 1 && part[0] === "0") return undefined; // no octal-looking forms
    const n = Number(part);
    if (n > 255) return undefined;
    out[i] = n;
  }
  return out;
}

/** The 16-bit groups of one side of `::` (an IPv4 tail allowed where `v4Tail`), or undefined. */
function groups(text: string, v4Tail: boolean): number[] | undefined {
  if (text === "") return [];
  const parts = text.split(":");
  const out: number[] = [];
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    if (v4Tail && i === parts.length - 1 && p.includes(".")) {
      const v4 = parseV4(p);
      if (!v4) return undefined;
      out.push(v4[0]! << 8 | v4[1]!, v4[2]! << 8 | v4[3]!);
    } else if (HEX_GROUP.test(p)) out.push(parseInt(p, 16));
    else return undefined;
  }
  return out;
}

function parseV6(text: string): Uint8Array | undefined {
  const zone = text.indexOf("%");
  const s = zone >= 0 ? text.slice(0, zone) : text;
  const halves = s.split("::");
  if (halves.length > 2) return undefined;
  const compressed = halves.length === 2;
  const head = groups(halves[0]!, !compressed);
  const tail = compressed ? groups(halves[1]!, true) : [];
  if (!head || !tail) return undefined;
  const zeros = 8 - head.length - tail.length;
  if (compressed ? zeros < 1 : zeros !== 0) return undefined;
  const all = [...head, ...new Array<number>(zeros).fill(0), ...tail];
  const out = new Uint8Array(16);
  all.forEach((w, i) => {
    out[2 * i] = w >> 8;
    out[2 * i + 1] = w & 0xff;
  });
  return out;
}

/** True for ::ffff:0:0/96. */
function isMapped(b: Uint8Array): boolean {
  for (let i = 0; i < 10; i++) if (b[i] !== 0) return false;
  return b[10] === 0xff && b[11] === 0xff;
}

/**
 * Parses an IPv4 or IPv6 address (a zone id `%eth0` is ignored; `[…]` brackets are accepted);
 * undefined when it is not one. IPv4-mapped IPv6 addresses come back as IPv4.
 */
export function parseIp(text: string): IpAddress | undefined {
  let s = text.trim();
  if (s.startsWith("[") && s.endsWith("]")) s = s.slice(1, -1);
  if (!s.includes(":")) {
    const v4 = parseV4(s);
    return v4 ? { version: 4, bytes: v4 } : undefined;
  }
  const v6 = parseV6(s);
  if (!v6) return undefined;
  return isMapped(v6) ? { version: 4, bytes: v6.slice(12) } : { version: 6, bytes: v6 };
}

/**
 * An address as a client writes it in `X-Forwarded-For`: a bare address, or with a port
 * (`203.0.113.7:51234`, `[2001:db8::1]:443`), as some proxies append it.
 */
export function parseForwardedIp(text: string): IpAddress | undefined {
  const s = text.trim();
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(s);
  if (bracketed) return parseIp(bracketed[1]!);
  const v4port = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(s);
  return parseIp(v4port ? v4port[1]! : s);
}

/** Parses `addr/prefix` or a bare address (a /32 or /128); undefined when malformed. */
export function parseCidr(text: string): Cidr | undefined {
  const s = text.trim();
  const slash = s.indexOf("/");
  const addrText = slash < 0 ? s : s.slice(0, slash);
  const v6 = addrText.includes(":") ? parseV6(addrText.replace(/^\[(.*)\]$/, "$1")) : undefined;
  const v4 = v6 ? undefined : parseV4(addrText);
  if (!v6 && !v4) return undefined;
  const max = v6 ? 128 : 32;
  let prefix = max;
  if (slash >= 0) {
    const p = s.slice(slash + 1);
    if (!/^\d{1,3}$/.test(p)) return undefined;
    prefix = Number(p);
    if (prefix > max) return undefined;
  }
  if (v6 && isMapped(v6) && prefix >= 96) return { version: 4, bytes: v6.slice(12), prefix: prefix - 96 };
  return v6 ? { version: 6, bytes: v6, prefix } : { version: 4, bytes: v4!, prefix };
}

export function cidrContains(range: Cidr, ip: IpAddress): boolean {
  if (range.version !== ip.version) return false;
  const full = range.prefix >> 3;
  for (let i = 0; i < full; i++) if (range.bytes[i] !== ip.bytes[i]) return false;
  const rest = range.prefix & 7;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return (range.bytes[full]! & mask) === (ip.bytes[full]! & mask);
}

/** Parses a comma-separated CIDR list; throws naming the first malformed entry. */
export function parseCidrList(text: string): Cidr[] {
  const out: Cidr[] = [];
  for (const part of text.split(",")) {
    if (part.trim() === "") continue;
    const c = parseCidr(part);
    if (!c) throw new Error(`not a CIDR range: "${part.trim()}"`);
    out.push(c);
  }
  return out;
}

/** Canonical text of an IPv4 address, or of the /64 an IPv6 address is in (`2001:db8:0:1::/64`). */
export function clientBucketId(ip: IpAddress): string {
  const b = ip.bytes;
  if (ip.version === 4) return `${b[0]}.${b[1]}.${b[2]}.${b[3]}`;
  const w = (i: number) => ((b[2 * i]! << 8) | b[2 * i + 1]!).toString(16);
  return `${w(0)}:${w(1)}:${w(2)}:${w(3)}::/64`;
}

/** Canonical text of an address (IPv6 groups in lowercase hex, no compression). */
export function formatIp(ip: IpAddress): string {
  const b = ip.bytes;
  if (ip.version === 4) return `${b[0]}.${b[1]}.${b[2]}.${b[3]}`;
  const words: string[] = [];
  for (let i = 0; i < 8; i++) words.push(((b[2 * i]! << 8) | b[2 * i + 1]!).toString(16));
  return words.join(":");
}

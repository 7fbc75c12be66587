/**
 * The syntactic half of the fetch guard (spec §8.3): the URL string and the destination name, before any
 * DNS. The resolution half is resolve_guard.ts. Both run for the first URL and again for every
 * redirect hop.
 *
 * Two outcomes besides success:
 * - `malformed`: the string is not an acceptable URL at all (unparsable, over 2048 characters,
 *   whitespace or control characters, backslash, user/password, fragment) → 400
 *   `invalid_managed_service_request`, param `url` (for the client's own URL).
 * - `rejected`: a URL pointing somewhere the gateway will not go (scheme, port, IP literal in any
 *   notation — also the ones the URL parser cannot parse, such as an IPv6 zone id — name without a
 *   dot, metadata host, private suffix, trailing dot, IDN homograph, later: resolution) → 400
 *   `managed_service_destination_rejected`.
 */
import { domainToUnicode } from "node:url";

export const MAX_URL_CHARS = 2048;
export const PRODUCTION_PORTS: ReadonlySet<number> = new Set([80, 443]);

export type Verdict = "malformed" | "rejected";

export class UrlRejected extends Error {
  constructor(readonly verdict: Verdict, readonly reason: string) {
    super(`${verdict}: ${reason}`);
    this.name = "UrlRejected";
  }
}

export interface CheckedUrl {
  url: URL;
  /** Lower-case ASCII (punycode) host name, no trailing dot, never an IP literal. */
  host: string;
  /** Effective TCP port (80/443 when the URL has none). */
  port: number;
  tls: boolean;
}

/** Host names of cloud instance-metadata services (the IP forms are refused as IP literals). */
export const METADATA_HOSTS: ReadonlySet<string> = new Set([
  "metadata",
  "metadata.google.internal",
  "metadata.goog",
  "metadata.azure.com",
  "metadata.azure.internal",
  "instance-data",
  "instance-data.ec2.internal",
  "metadata.tencentyun.com",
  "metadata.platformequinix.com",
  "metadata.packet.net",
  "kubernetes.default",
  "kubernetes.default.svc",
]);

/** Spec suffixes (.home .internal .lan .local .localhost) plus other names that are never public. */
export const PRIVATE_SUFFIXES: readonly string[] = [
  "home",
  "internal",
  "lan",
  "local",
  "localhost",
  "localdomain",
  "intranet",
  "corp",
  "private",
  "arpa",
  "onion",
  "invalid",
  "test",
  "svc",
];

const reject = (reason: string): never => {
  throw new UrlRejected("rejected", reason);
};
const malformed = (reason: string): never => {
  throw new UrlRejected("malformed", reason);
};

/** inet_aton-style IPv4 in any notation: 1–4 parts, each decimal, 0-octal or 0x-hex (e.g. 0x7f.1, 2130706433). */
export function looksLikeIPv4(host: string): boolean {
  const h = host.endsWith(".") ? host.slice(0, -1) : host;
  const parts = h.split(".");
  if (parts.length < 1 || parts.length > 4) return false;
  return parts.every((p) => /^(0x[0-9a-f]*|[0-9]+)$/i.test(p));
}

/** Cyrillic and Greek letters that render like Latin ones (whole-script homographs such as "аррӏе"). */
const LATIN_LOOKALIKES = new Set([..."аеорсухіјѕԁһԛԝӏвкмнтъьαβεικνορτυχϲϳ"]);

function scriptOf(ch: string): string | undefined {
  if (/[0-9-]/.test(ch)) return undefined; // common to every script
  if (/\p{Script=Latin}/u.test(ch)) return "Latin";
  if (/\p{Script=Cyrillic}/u.test(ch)) return "Cyrillic";
  if (/\p{Script=Greek}/u.test(ch)) return "Greek";
  if (/\p{Script=Han}|\p{Script=Hiragana}|\p{Script=Katakana}/u.test(ch)) return "CJK";
  const m = /\p{L}/u.test(ch);
  return m ? "Other:" + ch.codePointAt(0)!.toString(16) : "Symbol";
}

/** Refuses a label that mixes scripts, or a Cyrillic/Greek label made only of Latin look-alikes. */
export function homographReason(unicodeHost: string): string | undefined {
  for (const label of unicodeHost.split(".")) {
    // deno-lint-ignore no-control-regex
    if (/^[\x00-\x7f]*$/.test(label)) continue;
    const scripts = new Set<string>();
    for (const ch of label) {
      const s = scriptOf(ch);
      if (s === "Symbol") return `symbol in name label "${label}"`;
      if (s) scripts.add(s.startsWith("Other:") ? "Other" : s);
    }
    if (scripts.size > 1) return `mixed scripts in "${label}"`;
    const letters = [...label].filter((ch) => scriptOf(ch) !== undefined);
    if (letters.length > 0 && letters.every((ch) => LATIN_LOOKALIKES.has(ch))) {
      return `label "${label}" is made only of Latin look-alike letters`;
    }
  }
  return undefined;
}

/**
 * Checks a URL string. `ports` is the set of allowed TCP ports: production always passes
 * PRODUCTION_PORTS; only tests inject another set.
 */
export function checkUrl(raw: string, ports: ReadonlySet<number> = PRODUCTION_PORTS): CheckedUrl {
  if (raw.length === 0) malformed("empty URL");
  if (raw.length > MAX_URL_CHARS) malformed(`URL longer than ${MAX_URL_CHARS} characters`);
  // The WHATWG parser silently strips tabs/newlines and edge spaces; refuse them before it can.
  // deno-lint-ignore no-control-regex
  if (/[\s\x00-\x1f\x7f\u0085\u00a0\u1680\u2000-\u200f\u2028-\u202f\u205f\u2060\u3000\ufeff]/u.test(raw)) {
    malformed("whitespace or control character in URL");
  }
  if (raw.includes("\\")) malformed("backslash in URL");
  if (raw.includes("#")) malformed("fragment in URL");
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(raw)?.[1]?.toLowerCase();
  if (scheme === undefined) return malformed("not an absolute URL");
  if (scheme !== "http" && scheme !== "https") reject(`scheme ${scheme}: is not http or https`);
  // The authority as written, before the parser normalises it: userinfo tricks are refused here.
  const authority = /^[a-zA-Z]+:\/\/([^/?]*)/.exec(raw)?.[1];
  if (authority === undefined) return malformed("URL without //authority");
  if (authority === "") malformed("URL without a host");
  if (authority.includes("@")) malformed("user or password in URL");
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    // The parser also fails on some addresses (an IPv6 zone id `[fe80::1%25lo]`, an IPv4 form out of
    // range such as `1.2.3.256`, a name whose last label is numeric): those are destinations, and every
    // refused destination gets the same answer.
    if (writtenHostIsIpForm(authority)) reject("IP address literal");
    return malformed("unparsable URL");
  }
  if (url.username !== "" || url.password !== "") malformed("user or password in URL");
  if (url.href.length > MAX_URL_CHARS) {
    malformed(`URL longer than ${MAX_URL_CHARS} characters once normalised`);
  }
  const tls = url.protocol === "https:";
  const port = url.port === "" ? (tls ? 443 : 80) : Number(url.port);
  if (!ports.has(port)) reject(`port ${port} is not allowed (80 and 443 only)`);
  checkHostName(url.hostname, authority);
  return { url, host: url.hostname, port, tls };
}

/**
 * The host of an authority as written (userinfo already refused) looks like an IP address: bracketed
 * (IPv6, with or without a zone id) or a dotted name whose last label is numeric or hex — the forms the
 * WHATWG parser treats as IPv4 (and refuses when out of range).
 */
export function writtenHostIsIpForm(authority: string): boolean {
  if (/^\[[^\]]*\](:[^:]*)?$/.test(authority)) return true;
  const host = authority.normalize("NFKC").replace(/:[^:]*$/, "").replace(/%2e|[\u3002\uff0e\uff61]/gi, ".")
    .replace(/\.$/, "");
  const last = host.split(".").pop() ?? "";
  return /^[0-9]+$/.test(last) || /^0x[0-9a-f]*$/i.test(last);
}

/** Destination-name rules; `written` is the authority as the client wrote it (for IDN checks). */
export function checkHostName(host: string, written = host): void {
  if (host === "") reject("empty host");
  if (host.startsWith("[") || host.includes(":")) reject("IPv6 address literal");
  if (looksLikeIPv4(host)) reject("IPv4 address literal");
  if (host.endsWith(".")) reject("trailing dot in host name");
  if (!/^[a-z0-9.-]+$/.test(host)) reject("host name has characters outside letters, digits, dot and hyphen");
  if (host.length > 253) reject("host name longer than 253 characters");
  const labels = host.split(".");
  if (labels.length < 2) reject("host name without a dot");
  for (const l of labels) {
    if (l === "" || l.length > 63 || l.startsWith("-") || l.endsWith("-")) reject(`bad label "${l}"`);
  }
  const tld = labels[labels.length - 1]!;
  if (/^[0-9]+$/.test(tld) || /^0x[0-9a-f]*$/.test(tld)) reject("numeric top-level label (IP address form)");
  if (METADATA_HOSTS.has(host)) reject("cloud metadata host name");
  for (const s of PRIVATE_SUFFIXES) {
    if (host === s || host.endsWith("." + s)) reject(`.${s} names are not public`);
  }
  // deno-lint-ignore no-control-regex
  if (labels.some((l) => l.startsWith("xn--")) || /[^\x00-\x7f]/.test(written)) {
    const unicode = domainToUnicode(host);
    if (unicode === "") reject("invalid internationalised name");
    const why = homographReason(unicode);
    if (why) reject(`IDN homograph: ${why}`);
  }
}

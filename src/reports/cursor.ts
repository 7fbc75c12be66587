/**
 * Tamper-evident page cursors for GET /v1/usage/requests and the dashboard's requests view:
 * `<payload>.<mac>`, both base64url, where mac = HMAC-SHA256 over a version tag, the key id, the canonical
 * filters and the payload. A cursor therefore only works for the key and the filters it was issued for;
 * anything else — edited, foreign, truncated, malformed — is 400 invalid_cursor.
 *
 * The usage report's secret is random per CursorSigner (one per running gateway), never stored: after a
 * restart old cursors answer invalid_cursor and the client starts paging again from the first page.
 * Persisting it would need a new Store method for one convenience; the report itself is complete
 * without it. The dashboard derives its signer's secret from the session instead (src/dashboard/), so its
 * links work on every process that shares the store.
 */
import { GatewayError } from "../errors/gateway_error.ts";
import { fromB64Url, toB64Url } from "../util/base64url.ts";

const VERSION = "usage-cursor/v1";
const MAX_CURSOR_CHARS = 2048;
const MAC_BYTES = 32;

/** Where the next page starts: a store continuation (null = newest row). */
export interface CursorPosition {
  after: string | null;
}

export class CursorSigner {
  readonly #key: Promise<CryptoKey>;

  constructor(secret: Uint8Array = crypto.getRandomValues(new Uint8Array(32))) {
    this.#key = crypto.subtle.importKey(
      "raw",
      secret as Uint8Array<ArrayBuffer>,
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign", "verify"],
    );
  }

  async sign(keyId: string, filters: string, pos: CursorPosition): Promise<string> {
    const payload = toB64Url(new TextEncoder().encode(JSON.stringify({ a: pos.after })));
    const mac = await crypto.subtle.sign("HMAC", await this.#key, macInput(keyId, filters, payload));
    return `${payload}.${toB64Url(new Uint8Array(mac))}`;
  }

  /** The position inside a cursor this signer issued for this key and these filters. */
  async verify(cursor: string, keyId: string, filters: string): Promise<CursorPosition> {
    const bad = () => new GatewayError("invalid_cursor", { param: "cursor" });
    if (cursor.length > MAX_CURSOR_CHARS) throw bad();
    const parts = cursor.split(".");
    if (parts.length !== 2) throw bad();
    const [payload, macText] = parts as [string, string];
    const mac = fromB64Url(macText);
    const raw = fromB64Url(payload);
    if (!mac || !raw || mac.length !== MAC_BYTES) throw bad();
    const ok = await crypto.subtle.verify(
      "HMAC",
      await this.#key,
      mac as Uint8Array<ArrayBuffer>,
      macInput(keyId, filters, payload),
    );
    if (!ok) throw bad();
    let decoded: unknown;
    try {
      decoded = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(raw));
    } catch {
      throw bad();
    }
    const a = (decoded as { a?: unknown } | null)?.a;
    if (a !== null && (typeof a !== "string" || a === "")) throw bad();
    return { after: a };
  }
}

function macInput(keyId: string, filters: string, payload: string): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(`${VERSION}\n${keyId}\n${filters}\n${payload}`);
}

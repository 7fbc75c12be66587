/**
 * What both stores share of the generic capabilities' data (store.ts SharedDocuments, ExpiringSets): a
 * document's encoding and size limit, and the names callers give documents and sets.
 */
import type { JsonDocument } from "./store.ts";

/** A document's largest size as JSON (store.ts); a Deno KV value holds at most 64 KiB. */
export const MAX_DOCUMENT_BYTES = 60_000;

const encoder = new TextEncoder();

/** The document as UTF-8 JSON, refused above MAX_DOCUMENT_BYTES. Bytes, not a JS string: a KV value
 *  stores a string with any non-Latin-1 character as UTF-16, up to twice the JSON's size. */
export function encodeDocument(name: string, doc: JsonDocument): Uint8Array {
  const bytes = encoder.encode(JSON.stringify(doc));
  if (bytes.byteLength > MAX_DOCUMENT_BYTES) {
    throw new RangeError(
      `${name} document of ${bytes.byteLength} bytes (at most ${MAX_DOCUMENT_BYTES})`,
    );
  }
  return bytes;
}

export function decodeDocument(bytes: Uint8Array): JsonDocument {
  return JSON.parse(new TextDecoder().decode(bytes)) as JsonDocument;
}

/** A document's or a set's name: a short identifier, so it can be a KV key part and a Postgres NOTIFY channel's
 *  prefix as it is. Throws on anything else (a caller's bug). */
export function checkName(name: string): string {
  if (!/^[a-z][a-z0-9_]{0,39}$/.test(name)) throw new Error(`invalid document or set name: ${name}`);
  return name;
}

/**
 * What makes a retry "the same request" (docs/idempotency.md): the surface, the path and the parsed body, so
 * a client that re-serialises its body (another key order, other whitespace) still matches. SHA-256 of the
 * canonical JSON (members sorted by name at every level); a body that is not JSON is taken as its bytes.
 */
import { createHash } from "node:crypto";
import { jsonDepthExceeds, MAX_BODY_DEPTH } from "../util/json_depth.ts";

export function requestFingerprint(surface: string, path: string, raw: Uint8Array): string {
  const hash = createHash("sha256").update(`${surface}\n${path}\n`);
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder().decode(raw));
  } catch {
    body = undefined;
  }
  // Not JSON, or nested past what a request may be (the engine refuses it): its bytes, before any walk.
  if (body === undefined || jsonDepthExceeds(body, MAX_BODY_DEPTH)) {
    return hash.update("raw\n").update(raw).digest("hex");
  }
  return hash.update("json\n").update(canonicalJson(body)).digest("hex");
}

/** JSON text with every object's members sorted by name (UTF-16 order). */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const obj = value as Record<string, unknown>;
    const names = Object.keys(obj).sort();
    return `{${names.map((n) => `${JSON.stringify(n)}:${canonicalJson(obj[n])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

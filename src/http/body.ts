/** Request body reading with a hard size limit, counted on the wire (Content-Length may be absent or lie). */
import { GatewayError } from "../errors/gateway_error.ts";
import { concatBytes } from "../util/bytes.ts";

export async function readBodyBytes(req: Request, limit: number): Promise<Uint8Array> {
  const declared = req.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) {
    await req.body?.cancel().catch(() => {});
    throw new GatewayError("request_body_too_large");
  }
  if (!req.body) return new Uint8Array(0);
  // A declared length within the limit is what HTTP framing will deliver: read it in one native call.
  if (declared !== null) return new Uint8Array(await req.arrayBuffer());
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw new GatewayError("request_body_too_large");
    }
    chunks.push(value);
  }
  return concatBytes(chunks);
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/** Reads a JSON object body: bad UTF-8 or JSON → invalid_json, any other JSON value → invalid_body_type. */
export async function readJsonObject(req: Request, limit: number): Promise<Record<string, unknown>> {
  return parseJsonObject(await readBodyBytes(req, limit));
}

/** Bad UTF-8 or JSON → invalid_json; any JSON value but an object → invalid_body_type. */
export function parseJsonObject(bytes: Uint8Array): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(bytes));
  } catch {
    throw new GatewayError("invalid_json");
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new GatewayError("invalid_body_type");
  }
  return value as Record<string, unknown>;
}

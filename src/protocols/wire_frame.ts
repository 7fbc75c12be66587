/**
 * The one malformed-upstream-frame policy, shared by the three stream decoders and the relays: a
 * frame whose data is not a JSON object, or a frame the decoder needs whose shape is not the one
 * its wire schema describes, throws UpstreamProtocolError. The engine turns the throw into the
 * surface's one error frame (`stream_service_error`): the stream never drops a frame silently.
 * Frame types a decoder does not handle are not parsed past their JSON, so they never fail.
 */
import type { z } from "zod";
import { isObject, type JsonObject } from "../util/json.ts";
import { UpstreamProtocolError } from "./codec.ts";

/** `data` of one SSE frame → its JSON object; throws UpstreamProtocolError naming `protocol`. */
export function parseFrameJson(protocol: string, data: string): JsonObject {
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch {
    throw new UpstreamProtocolError(`${protocol}: stream frame is not JSON`);
  }
  if (!isObject(json)) throw new UpstreamProtocolError(`${protocol}: stream frame is not a JSON object`);
  return json;
}

/** A frame (or a body) read through its wire schema; throws UpstreamProtocolError naming `what`. */
export function readWire<S extends z.ZodType>(
  protocol: string,
  what: string,
  schema: S,
  json: unknown,
): z.output<S> {
  const r = schema.safeParse(json);
  if (!r.success) {
    const at = r.error.issues[0]?.path.join(".") || "(frame)";
    throw new UpstreamProtocolError(`${protocol}: malformed ${what} at ${at}`);
  }
  return r.data;
}

/** The error a hand-written hot-path guard throws (same wording as readWire). */
export function malformedFrame(protocol: string, what: string, at: string): UpstreamProtocolError {
  return new UpstreamProtocolError(`${protocol}: malformed ${what} at ${at}`);
}

/** `v` when it is a string, or absent/null (→ undefined); anything else throws malformedFrame. */
export function optTextField(v: unknown, protocol: string, what: string, at: string): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === "string") return v;
  throw malformedFrame(protocol, what, at);
}

/**
 * The contract every wire protocol implements. A protocol is both a client surface (we serve it)
 * and an upstream protocol (we call it), because the wire format is the same:
 *   surface side:  decodeRequest, encodeResponse, createStreamEncoder
 *   upstream side: encodeRequest, decodeResponse, createStreamDecoder, parseUpstreamError
 *   native relay:  prepareNativeRequest, createRelay (client surface == upstream protocol)
 * Everything here is pure: no I/O, no clock, no randomness except through EncodeContext.
 */
import type { ErrorObject } from "../errors/error_object.ts";
import type { IREvent } from "../ir/events.ts";
import type { IRRequest, IRRequestParams } from "../ir/request.ts";
import type { IRResponse } from "../ir/response.ts";
import type { ObjectEdits } from "../util/json_span.ts";

export type ProtocolName = "anthropic" | "openai_chat" | "openai_responses";

/** One parsed SSE event from an upstream body (`event:` may be absent; `data` is the joined data lines). */
export interface SseFrame {
  event?: string;
  data: string;
}

export interface EncodeContext {
  requestId: string;
  /** Model id shown to the client (always the requested id, spec §4.7 fallback). */
  model: string;
  /** Unix seconds. */
  now(): number;
  /** A fresh unique id with the given prefix, e.g. newId("msg_"). */
  newId(prefix: string): string;
  /** The decoded client request's parameters (Responses echoes some; Chat needs includeUsage), not its prompt. */
  request: IRRequestParams;
  /** The gateway's input estimate, shown where a surface reports input before the upstream has. */
  inputEstimate?: number;
}

/** Encodes internal events into the client's SSE text. */
export interface StreamEncoder {
  /** SSE text for one event ("" when the event produces no frame). A `finish` event yields the terminal frames. */
  push(event: IREvent): string;
  /**
   * The in-stream error frame(s) for a failure after the 200 went out (spec §6): Messages `event: error`;
   * Chat `data: {"error":…,"request_id":…}` then `data: [DONE]`; Responses `event: error` then
   * `event: response.failed`. Nothing may be emitted after it.
   */
  error(err: ErrorObject): string;
}

/** Decodes upstream SSE frames into internal events. */
export interface StreamDecoder {
  push(frame: SseFrame): IREvent[];
  /**
   * The upstream body ended. Returns any events still pending (for Chat Completions: a finish whose
   * `finish_reason` was seen but no `[DONE]` arrived). Returns no `finish` when the stream ended early;
   * the engine then emits the error frame.
   */
  end(): IREvent[];
}

/** Native pass-through: frames go to the client as the upstream sent them, with only the changes the spec demands. */
export interface Relay {
  /** SSE text to send to the client for this upstream frame ("" to drop it). */
  push(frame: SseFrame): string;
  /** Internal events decoded from the frames pushed since the last call (usage tap, finish, errors). */
  events(): IREvent[];
  /** The upstream body ended: text the client still needs (e.g. a `[DONE]` the upstream omitted), or "". */
  end(): string;
  /** Error frame(s), consistent with what was relayed so far (e.g. Responses sequence numbers). */
  error(err: ErrorObject): string;
}

export interface UpstreamRequestOptions {
  /** Model id the upstream expects. */
  upstreamModel: string;
  /** Output budget to send when the request has none and the protocol requires one (Messages). */
  defaultMaxTokens: number;
}

export interface UpstreamErrorInfo {
  message: string;
  type?: string;
  code?: string;
}

export interface Protocol {
  readonly name: ProtocolName;
  /** Path appended to the upstream base URL, e.g. "/v1/messages". */
  readonly upstreamPath: string;
  /**
   * Client request headers that carry request semantics and reach a native upstream unchanged (lower case;
   * e.g. `anthropic-beta`, which gates body fields like `context_management`). Dropped on translated routes.
   */
  readonly nativeHeaders: readonly string[];

  /** Validates and decodes a client body (already a JSON object; model and messages presence checked).
   *  Throws GatewayError (invalid_request / invalid_parameter / unsupported_parameter with `param`). */
  decodeRequest(body: Record<string, unknown>): IRRequest;
  encodeResponse(res: IRResponse, ctx: EncodeContext): Record<string, unknown>;
  createStreamEncoder(ctx: EncodeContext): StreamEncoder;

  encodeRequest(req: IRRequest, opts: UpstreamRequestOptions): Record<string, unknown>;
  /** Throws UpstreamProtocolError when the JSON is not a valid response of this protocol. */
  decodeResponse(json: unknown): IRResponse;
  createStreamDecoder(): StreamDecoder;
  parseUpstreamError(status: number, bodyText: string): UpstreamErrorInfo;

  /** The client's own body made ready for the upstream (model replaced, usage reporting forced on). */
  prepareNativeRequest(body: Record<string, unknown>, opts: UpstreamRequestOptions): Record<string, unknown>;
  /** A non-streaming native response body made ready for the client (model name restored). */
  relayResponse(json: Record<string, unknown>, ctx: EncodeContext): Record<string, unknown>;
  createRelay(ctx: EncodeContext): Relay;
  /**
   * An operator prompt before the client's system prompt on a native body: the client's bytes (`edits`, which
   * with their changes so far parse to `body`) changed in place of re-serialising them, or the prepared body
   * object. A protocol without it has such requests translated instead.
   */
  prefixSystem?(
    body: Record<string, unknown>,
    edits: ObjectEdits | undefined,
    prompt: string,
  ): Record<string, unknown> | Uint8Array;
}

/** An upstream answered something that is not valid for its protocol. */
export class UpstreamProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UpstreamProtocolError";
  }
}

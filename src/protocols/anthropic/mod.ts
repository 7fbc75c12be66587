/** The Anthropic Messages protocol: client surface, upstream protocol and native relay. */
import type { Protocol } from "../codec.ts";
import { parseUpstreamError } from "../upstream_error.ts";
import { relayResponse, withUpstreamModel } from "../native.ts";
import { createRelay } from "./relay.ts";
import { decodeRequest } from "./request_decode.ts";
import { encodeRequest } from "./request_encode.ts";
import { decodeResponse } from "./response_decode.ts";
import { encodeResponse } from "./response_encode.ts";
import { createStreamDecoder } from "./stream_decode.ts";
import { createStreamEncoder } from "./stream_encode.ts";
import { prefixSystem, prefixSystemBytes } from "./system_prefix.ts";

export const anthropic: Protocol = {
  name: "anthropic",
  upstreamPath: "/v1/messages",
  nativeHeaders: ["anthropic-beta"],
  decodeRequest,
  encodeResponse,
  createStreamEncoder,
  encodeRequest,
  decodeResponse,
  createStreamDecoder,
  parseUpstreamError,
  prepareNativeRequest: withUpstreamModel,
  relayResponse,
  createRelay,
  prefixSystem: (body, edits, prompt) =>
    edits ? prefixSystemBytes(edits, body, prompt) : prefixSystem(body, prompt),
};

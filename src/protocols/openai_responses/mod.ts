/** The OpenAI Responses protocol (protocols §4): client surface, upstream protocol and native relay. */
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

export const openaiResponses: Protocol = {
  name: "openai_responses",
  upstreamPath: "/v1/responses",
  nativeHeaders: [],
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
};

/** The OpenAI Chat Completions protocol: client surface, upstream protocol and native relay. */
import type { Protocol } from "../codec.ts";
import { parseUpstreamError } from "../upstream_error.ts";
import { relayResponse } from "../native.ts";
import { prepareNativeRequest } from "./native.ts";
import { createRelay } from "./relay.ts";
import { decodeRequest } from "./request_decode.ts";
import { encodeRequest } from "./request_encode.ts";
import { decodeResponse } from "./response_decode.ts";
import { encodeResponse } from "./response_encode.ts";
import { createStreamDecoder } from "./stream_decode.ts";
import { createStreamEncoder } from "./stream_encode.ts";

export { ChatRelay } from "./relay.ts";
export { ChatStreamDecoder } from "./stream_decode.ts";
export { ChatStreamEncoder } from "./stream_encode.ts";

export const openaiChat: Protocol = {
  name: "openai_chat",
  upstreamPath: "/v1/chat/completions",
  nativeHeaders: [],
  decodeRequest,
  encodeResponse,
  createStreamEncoder,
  encodeRequest,
  decodeResponse,
  createStreamDecoder,
  parseUpstreamError,
  prepareNativeRequest,
  relayResponse,
  createRelay,
};

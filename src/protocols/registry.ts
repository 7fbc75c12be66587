import { anthropic } from "./anthropic/mod.ts";
import type { Protocol, ProtocolName } from "./codec.ts";
import { openaiChat } from "./openai_chat/mod.ts";
import { openaiResponses } from "./openai_responses/mod.ts";

export const PROTOCOLS: Record<ProtocolName, Protocol> = {
  anthropic,
  openai_chat: openaiChat,
  openai_responses: openaiResponses,
};

/**
 * IRResponse → client Response JSON (protocols §4.5). Consecutive text blocks form one message item; a text
 * block's citations become `url_citation` annotations over its span of that item's text; a provider-run web
 * search or fetch is a `web_search_call` item between the message items (items.ts).
 */
import type { EncodeContext } from "../codec.ts";
import type { IRResponse } from "../../ir/response.ts";
import {
  finalArguments,
  functionCallItem,
  isShownServerTool,
  messageItem,
  reasoningItem,
  urlCitations,
  webSearchCallItem,
} from "./items.ts";
import { clientCallName } from "./namespace.ts";
import { responseObject } from "./response_object.ts";
import { statusFromStopReason } from "./status.ts";
import { usageToWire } from "./usage.ts";

export function encodeResponse(res: IRResponse, ctx: EncodeContext): Record<string, unknown> {
  const id = ctx.newId("resp_");
  const { status, incompleteReason } = statusFromStopReason(res.stopReason);
  const output: Record<string, unknown>[] = [];
  let text: string | undefined; // consecutive text blocks form one message item
  let annotations: Record<string, unknown>[] = [];
  const flush = () => {
    if (text !== undefined) output.push(messageItem(ctx.newId("msg_"), "completed", text, annotations));
    text = undefined;
    annotations = [];
  };
  for (const block of res.content) {
    if (block.type === "text") {
      const start = text?.length ?? 0;
      text = (text ?? "") + block.text;
      if (block.citations) annotations.push(...urlCitations(block.citations, start, text.length));
    } else if (block.type === "server_tool") {
      if (!isShownServerTool(block)) continue;
      flush();
      output.push(webSearchCallItem(ctx.newId("ws_"), block, true));
    } else if (block.type === "reasoning") {
      flush();
      output.push(reasoningItem(ctx.newId("rs_"), block.text));
    } else {
      flush();
      output.push(
        functionCallItem(
          ctx.newId("fc_"),
          "completed",
          { callId: block.id, ...clientCallName(ctx.request.tools, block.name) },
          finalArguments(block.arguments),
        ),
      );
    }
  }
  flush();
  // A truncated response truncated its last item.
  const last = output[output.length - 1];
  if (status === "incomplete" && last && last.type === "message") last.status = "incomplete";

  const now = ctx.now();
  return responseObject(ctx, {
    id,
    createdAt: now,
    status,
    completedAt: status === "completed" ? now : null,
    incompleteReason,
    output,
    usage: usageToWire(res.usage),
  });
}

/** IRResponse → client Response JSON (protocols §4.5). */
import type { EncodeContext } from "../codec.ts";
import type { IRResponse } from "../../ir/response.ts";
import { finalArguments, functionCallItem, messageItem, reasoningItem } from "./items.ts";
import { clientCallName } from "./namespace.ts";
import { responseObject } from "./response_object.ts";
import { statusFromStopReason } from "./status.ts";
import { usageToWire } from "./usage.ts";

export function encodeResponse(res: IRResponse, ctx: EncodeContext): Record<string, unknown> {
  const id = ctx.newId("resp_");
  const { status, incompleteReason } = statusFromStopReason(res.stopReason);
  const output: Record<string, unknown>[] = [];
  let text: string | undefined; // consecutive text blocks form one message item
  const flush = () => {
    if (text !== undefined) output.push(messageItem(ctx.newId("msg_"), "completed", text));
    text = undefined;
  };
  for (const block of res.content) {
    if (block.type === "text") {
      text = (text ?? "") + block.text;
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

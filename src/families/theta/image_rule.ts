/**
 * Theta's text-only model (spec §4.7: `theta3.7-max` takes text only) refuses an image with 400
 * `invalid_parameter` whose `param` names the image block, on every surface: `messages.0.content.1` (Chat,
 * Messages), `messages.0.content.1.content.0` (an image inside a Messages tool result), `input.0.content.1`
 * (Responses). Read on the raw body, before a decoder, so the position is the client's own; no fallback to
 * a model that takes images (spec §4.7).
 */
import type { ModelEntry } from "../../catalog/models.ts";
import { GatewayError } from "../../errors/gateway_error.ts";
import type { ProtocolName } from "../../protocols/codec.ts";
import { isObject } from "../../util/json.ts";

/** The image block types of the three surfaces (Messages `image`, Chat `image_url`, Responses `input_image`). */
const IMAGE_TYPES = new Set(["image", "image_url", "input_image"]);

const isImage = (v: unknown) => isObject(v) && typeof v.type === "string" && IMAGE_TYPES.has(v.type);

/**
 * The path of the first image block: in a message's (or Responses item's) `content`, a Responses tool
 * output's `output`, or one level down in a Messages `tool_result`'s `content`.
 */
export function firstImageBlock(surface: ProtocolName, body: Record<string, unknown>): string | undefined {
  const name = surface === "openai_responses" ? "input" : "messages";
  const list = body[name];
  if (!Array.isArray(list)) return undefined;
  for (let i = 0; i < list.length; i++) {
    const item = list[i];
    if (!isObject(item)) continue;
    for (const key of ["content", "output"]) {
      const parts = item[key];
      if (!Array.isArray(parts)) continue;
      for (let j = 0; j < parts.length; j++) {
        const part = parts[j];
        const at = `${name}.${i}.${key}.${j}`;
        if (isImage(part)) return at;
        const inner = isObject(part) && part.type === "tool_result" ? part.content : undefined;
        if (!Array.isArray(inner)) continue;
        const k = inner.findIndex(isImage);
        if (k >= 0) return `${at}.content.${k}`;
      }
    }
  }
  return undefined;
}

/** Throws when a model without images is sent one. */
export function refuseImages(model: ModelEntry, surface: ProtocolName, body: Record<string, unknown>): void {
  if (model.images) return;
  const at = firstImageBlock(surface, body);
  if (at !== undefined) {
    throw new GatewayError("invalid_parameter", {
      param: at,
      detail: `Модель ${model.id} принимает только текст: уберите изображение.`,
    });
  }
}

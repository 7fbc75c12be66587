/**
 * GET /v1/models in a shape both SDKs list: OpenAI's (`object`, `created`, `owned_by`) and Anthropic's (`type`,
 * `display_name`, `created_at`, and a single page: `has_more: false` with `first_id`/`last_id`), plus the
 * family, context window and output limit.
 */
import { ONE_WRITE } from "../util/one_write.ts";
import type { App } from "../app.ts";
import type { KeyContext } from "../request/context.ts";
import { CATALOG_CREATED, MODELS } from "../catalog/models.ts";

const BODY = JSON.stringify({
  object: "list",
  data: MODELS.map((m) => ({
    id: m.id,
    object: "model",
    type: "model",
    display_name: m.id,
    created: CATALOG_CREATED,
    created_at: new Date(CATALOG_CREATED * 1000).toISOString(),
    owned_by: m.family,
    family: m.family,
    context_window: m.contextWindow,
    max_output_tokens: m.maxOutputTokens,
    input_modalities: m.images ? ["text", "image"] : ["text"],
  })),
  has_more: false,
  first_id: MODELS[0]!.id,
  last_id: MODELS.at(-1)!.id,
});

export function listModels(_app: App, ctx: KeyContext): Response {
  return new Response(BODY, {
    headers: { "content-type": "application/json", ...ONE_WRITE, "request-id": ctx.requestId },
  });
}

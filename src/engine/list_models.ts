/** GET /v1/models in the OpenAI list shape, plus family and context window. */
import type { App } from "../app.ts";
import type { KeyContext } from "../request/context.ts";
import { CATALOG_CREATED, MODELS } from "../catalog/models.ts";

const BODY = JSON.stringify({
  object: "list",
  data: MODELS.map((m) => ({
    id: m.id,
    object: "model",
    created: CATALOG_CREATED,
    owned_by: m.family,
    family: m.family,
    context_window: m.contextWindow,
    max_output_tokens: m.maxOutputTokens,
    input_modalities: m.images ? ["text", "image"] : ["text"],
  })),
});

export function listModels(_app: App, ctx: KeyContext): Response {
  return new Response(BODY, { headers: { "content-type": "application/json", "request-id": ctx.requestId } });
}

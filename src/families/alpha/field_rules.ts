/**
 * spec §4.2 as data: one row per field (and surface set) of family alpha, read by the shared interpreter
 * (`../field_rules.ts`, which documents how a row is read). The field list is open: a field without a
 * row is forwarded unchanged.
 */
import type { ProtocolName } from "../../protocols/codec.ts";
import type { Check } from "../checks.ts";
import type { FieldRule, FieldTable } from "../field_rules.ts";

export const CODING_MODELS = ["alpha-for-coding", "alpha-for-coding-highspeed"] as const;

const CHAT: readonly ProtocolName[] = ["openai_chat"];
const RESPONSES: readonly ProtocolName[] = ["openai_responses"];
const MESSAGES: readonly ProtocolName[] = ["anthropic"];
const OPENAI: readonly ProtocolName[] = ["openai_chat", "openai_responses"];

const ACCEPT: Check = { kind: "accept" };

/** An "accepted and forwarded" Chat row: no check, no change (documents that the field is known). */
const accepted = (field: string): FieldRule => ({
  field,
  surfaces: CHAT,
  rule: "accept",
  check: ACCEPT,
  code: "invalid_parameter",
  detail: "",
});

const removed = (field: string): FieldRule => ({
  field,
  surfaces: OPENAI,
  rule: "remove",
  check: ACCEPT,
  remove: true,
  code: "invalid_parameter",
  detail: "",
});

const onlyZero = (field: string): FieldRule => ({
  field,
  surfaces: CHAT,
  rule: "only-values",
  check: { kind: "only-values", values: [0] },
  code: "invalid_parameter",
  detail: `Для моделей alpha ${field} принимает только 0.`,
});

const positiveInt = (field: string): FieldRule => ({
  field,
  surfaces: CHAT,
  rule: "positive-integer",
  check: { kind: "positive-integer" },
  code: "invalid_parameter",
  detail: `Для моделей alpha ${field} — целое число больше нуля.`,
});

const SERVICE_TIER: Check = { kind: "only-values", values: ["auto", "priority"] };
const STORE: Check = { kind: "only-values", values: [false] };

export const ALPHA_FIELD_RULES: readonly FieldRule[] = [
  // `model` has no row: admit() already refused any id outside the catalog with 404 model_not_found,
  // so only the four alpha ids reach these rules.

  // Required and non-empty. Same code as the Chat codec gives every family (invalid_request): the
  // row adds alpha's reason; `null` is refused like a missing list.
  {
    field: "messages",
    surfaces: CHAT,
    rule: "required-non-empty-array",
    check: { kind: "non-empty-array" },
    nullRefused: true,
    code: "invalid_request",
    detail: "Для моделей alpha messages — непустой массив.",
  },
  // Positive integers; the Chat codec then takes max_completion_tokens ?? max_tokens as the output
  // part of the reserve (spec §8.1 p.2) and the engine checks it against the model's output limit.
  positiveInt("max_tokens"),
  positiveInt("max_completion_tokens"),
  // Same code as the Chat codec (invalid_request) for a non-boolean stream.
  {
    field: "stream",
    surfaces: CHAT,
    rule: "boolean",
    check: { kind: "boolean" },
    code: "invalid_request",
    detail: "Для моделей alpha stream — true или false.",
  },
  // Only include_usage (a boolean); any other key → unsupported_parameter at `stream_options.<key>`.
  {
    field: "stream_options",
    surfaces: CHAT,
    rule: "shape-check",
    check: { kind: "object", fields: { include_usage: { kind: "boolean" } }, otherKeys: "refuse" },
    code: "invalid_parameter",
    detail: "Для моделей alpha stream_options содержит только include_usage (true или false).",
  },
  // Removed on Chat Completions and Responses whatever the value (the provider accepts only fixed values).
  removed("temperature"),
  removed("top_p"),
  // Messages: passed through unchanged (the Anthropic codec still checks their ranges).
  { ...accepted("temperature"), surfaces: MESSAGES },
  { ...accepted("top_p"), surfaces: MESSAGES },
  positiveInt("top_k"),
  onlyZero("frequency_penalty"),
  onlyZero("presence_penalty"),
  {
    field: "n",
    surfaces: CHAT,
    rule: "only-values",
    check: { kind: "only-values", values: [1] },
    code: "invalid_parameter",
    detail: "Для моделей alpha n принимает только 1.",
  },
  // Client functions: shapes are the Chat codec's; only tool_choice "required" is model-restricted.
  accepted("tools"),
  accepted("parallel_tool_calls"),
  {
    field: "tool_choice",
    surfaces: CHAT,
    rule: "model-restricted",
    check: ACCEPT,
    refusedOn: { models: CODING_MODELS, values: ["required"] },
    code: "invalid_parameter",
    detail: "tool_choice required не поддерживается моделями alpha-for-coding и alpha-for-coding-highspeed.",
  },
  // Responses and Messages reach the same provider: their spellings of "required" are refused too.
  {
    field: "tool_choice",
    surfaces: RESPONSES,
    rule: "model-restricted",
    check: ACCEPT,
    refusedOn: { models: CODING_MODELS, values: ["required", { type: "allowed_tools", mode: "required" }] },
    code: "invalid_parameter",
    detail: "tool_choice required не поддерживается моделями alpha-for-coding и alpha-for-coding-highspeed.",
  },
  {
    field: "tool_choice",
    surfaces: MESSAGES,
    rule: "model-restricted",
    check: ACCEPT,
    refusedOn: { models: CODING_MODELS, values: [{ type: "any" }] },
    code: "invalid_parameter",
    detail: "tool_choice any не поддерживается моделями alpha-for-coding и alpha-for-coding-highspeed.",
  },
  // Any non-empty string on any model, forwarded byte for byte (no level list: "whatever-level" passes).
  {
    field: "reasoning_effort",
    surfaces: CHAT,
    rule: "non-empty-string",
    check: { kind: "string", minLength: 1 },
    code: "invalid_parameter",
    detail: "Для моделей alpha reasoning_effort — непустая строка.",
  },
  // Responses spelling: reasoning.effort a non-empty string, other keys of `reasoning` kept. (The
  // Responses codec then limits effort to its own list of levels, which holds low/high/max.)
  {
    field: "reasoning",
    surfaces: RESPONSES,
    rule: "non-empty-string",
    check: { kind: "object", fields: { effort: { kind: "string", minLength: 1 } }, otherKeys: "keep" },
    code: "invalid_parameter",
    detail: "Для моделей alpha reasoning.effort — непустая строка.",
  },
  // Only the coding models (elsewhere unsupported_parameter), and only exactly {type:"enabled", keep:"all"}.
  {
    field: "thinking",
    surfaces: CHAT,
    rule: "model-restricted",
    onlyModels: CODING_MODELS,
    check: { kind: "exact-object", value: { type: "enabled", keep: "all" } },
    code: "invalid_parameter",
    detail:
      'thinking есть только у alpha-for-coding и alpha-for-coding-highspeed и только как {"type":"enabled","keep":"all"}.',
  },
  // Accepted and forwarded; their shapes are the provider's business (stop is also read by the codec).
  accepted("response_format"),
  accepted("stop"),
  accepted("partial"),
  accepted("prompt_cache_key"),
  // "Shape is checked, then forwarded" (spec §4.2): the shapes below are OpenAI's documented ones.
  // seed: an integer (any sign), no range of our own.
  {
    field: "seed",
    surfaces: CHAT,
    rule: "shape-check",
    check: { kind: "integer" },
    code: "invalid_parameter",
    detail: "Для моделей alpha seed — целое число.",
  },
  // metadata: an object of at most 16 string values; keys up to 64 and values up to 512 characters.
  {
    field: "metadata",
    surfaces: CHAT,
    rule: "shape-check",
    check: {
      kind: "object",
      otherKeys: { kind: "string", maxLength: 512 },
      maxKeys: 16,
      maxKeyLength: 64,
    },
    code: "invalid_parameter",
    detail:
      "Для моделей alpha metadata — объект не более чем из 16 строковых значений (ключ до 64, значение до 512 символов).",
  },
  // prediction: {type:"content", content: string | [{type:"text", text}]}; extra keys are kept.
  {
    field: "prediction",
    surfaces: CHAT,
    rule: "shape-check",
    check: {
      kind: "object",
      required: ["type", "content"],
      fields: {
        type: { kind: "only-values", values: ["content"] },
        content: {
          kind: "any-of",
          options: [
            { kind: "string" },
            {
              kind: "array-of",
              item: {
                kind: "object",
                required: ["type", "text"],
                fields: { type: { kind: "only-values", values: ["text"] }, text: { kind: "string" } },
                otherKeys: "keep",
              },
            },
          ],
        },
      },
      otherKeys: "keep",
    },
    code: "invalid_parameter",
    detail:
      'Для моделей alpha prediction — {"type":"content","content": строка или массив текстовых частей}.',
  },
  // service_tier auto | priority; store only false. Also on Responses (the gateway keeps no responses).
  {
    field: "service_tier",
    surfaces: OPENAI,
    rule: "only-values",
    check: SERVICE_TIER,
    code: "invalid_parameter",
    detail: "Для моделей alpha service_tier — auto или priority.",
  },
  {
    field: "store",
    surfaces: OPENAI,
    rule: "only-values",
    check: STORE,
    code: "invalid_parameter",
    detail: "Для моделей alpha store принимает только false.",
  },
  // safety_identifier: a string (no length rule of our own).
  {
    field: "safety_identifier",
    surfaces: CHAT,
    rule: "shape-check",
    check: { kind: "string" },
    code: "invalid_parameter",
    detail: "Для моделей alpha safety_identifier — строка.",
  },
  accepted("user"),
  accepted("logprobs"),
  accepted("top_logprobs"),
  accepted("logit_bias"),
  accepted("modalities"),
  accepted("audio"),
  accepted("web_search_options"),
  accepted("reasoning"),
  accepted("verbosity"),
];

/** The open list of spec §4.2: unknown fields pass to the provider unchanged. */
export const ALPHA_FIELDS: FieldTable = { rows: ALPHA_FIELD_RULES };

/**
 * spec §4.6 as data: the closed accepted list of families gamma and eta, per surface, read by the shared
 * interpreter (`../field_rules.ts`) in closed-list mode. A field without a row on the request's surface is
 * refused with 400 `delta_parameter_unavailable` naming it — `response_format`, `reasoning_effort`,
 * `reasoning`, `stop`, `stop_sequences` and everything else a client may add (Claude Code's
 * `context_management`, Codex's `parallel_tool_calls`). The error's action lists `DELTA_ACCEPTED`.
 */
import type { ProtocolName } from "../../protocols/codec.ts";
import type { Check } from "../checks.ts";
import type { FieldRule, FieldTable } from "../field_rules.ts";

const MESSAGES: readonly ProtocolName[] = ["anthropic"];
const CHAT: readonly ProtocolName[] = ["openai_chat"];
const RESPONSES: readonly ProtocolName[] = ["openai_responses"];
const ALL: readonly ProtocolName[] = ["anthropic", "openai_chat", "openai_responses"];

const CODE = "delta_parameter_unavailable";

/** Accepted and forwarded; the surface codec checks the value's shape. */
const accepted = (field: string, surfaces: readonly ProtocolName[]): FieldRule => ({
  field,
  surfaces,
  rule: "accept",
  check: { kind: "accept" },
  code: CODE,
  detail: "",
});

/** Accepted without effect and not sent upstream (spec §4.6). */
const ignored = (field: string): FieldRule => ({
  field,
  surfaces: ALL,
  rule: "remove",
  check: { kind: "accept" },
  remove: true,
  code: CODE,
  detail: "",
});

/**
 * Each tool as a whole must be a client tool of the surface; typed server tools (spec §4.5) and hosted tools
 * are refused at `tools.<i>`. (`any-of` with one option reports the failure at the item, not inside it.)
 */
const toolsOf = (types: readonly string[] | "untyped-or-custom"): Check => ({
  kind: "array-of",
  item: {
    kind: "any-of",
    options: [{
      kind: "object",
      fields: { type: { kind: "only-values", values: types === "untyped-or-custom" ? ["custom"] : types } },
      ...(types === "untyped-or-custom" ? {} : { required: ["type"] }),
      otherKeys: "keep",
    }],
  },
});

const toolRow = (surfaces: readonly ProtocolName[], check: Check): FieldRule => ({
  field: "tools",
  surfaces,
  rule: "shape-check",
  check,
  code: CODE,
  detail:
    "В tools gamma и eta принимают только клиентские функции; серверные и встроенные инструменты недоступны.",
});

/** Only the surface's automatic form (spec §4.6). */
const autoChoice = (surfaces: readonly ProtocolName[], auto: Check): FieldRule => ({
  field: "tool_choice",
  surfaces,
  rule: "only-values",
  check: auto,
  code: CODE,
  detail: "Gamma и eta принимают только автоматический выбор инструмента (tool_choice auto).",
});

/** The accepted fields per surface, as the action of `delta_parameter_unavailable` names them. */
export const DELTA_ACCEPTED: Record<ProtocolName, readonly string[]> = {
  anthropic: ["model", "messages", "max_tokens", "system", "stream", "tools", "tool_choice"],
  openai_chat: ["model", "messages", "max_tokens", "max_completion_tokens", "stream", "tools", "tool_choice"],
  openai_responses: ["model", "input", "instructions", "max_output_tokens", "stream", "tools", "tool_choice"],
};

const SHAPED = new Set(["tools", "tool_choice"]);

export const DELTA_FIELD_RULES: readonly FieldRule[] = [
  ...(Object.entries(DELTA_ACCEPTED) as [ProtocolName, readonly string[]][]).flatMap(([surface, fields]) =>
    fields.filter((f) => !SHAPED.has(f)).map((f) => accepted(f, [surface]))
  ),
  ignored("temperature"),
  ignored("top_p"),
  ignored("metadata"),
  ignored("thinking"),
  toolRow(MESSAGES, toolsOf("untyped-or-custom")),
  toolRow(CHAT, toolsOf(["function"])),
  // Codex's namespace tools are groups of client functions (protocols/openai_responses/namespace.ts).
  toolRow(RESPONSES, toolsOf(["function", "namespace"])),
  autoChoice(MESSAGES, { kind: "exact-object", value: { type: "auto" } }),
  autoChoice(CHAT, { kind: "only-values", values: ["auto"] }),
  autoChoice(RESPONSES, { kind: "only-values", values: ["auto"] }),
  // Plain text output is the default and may be named; any other format is refused at `text.<key>`.
  {
    field: "text",
    surfaces: RESPONSES,
    rule: "shape-check",
    check: {
      kind: "object",
      fields: { format: { kind: "exact-object", value: { type: "text" } } },
      otherKeys: "refuse",
    },
    code: CODE,
    detail: "Gamma и eta отвечают только обычным текстом: text.format — только {type: text}.",
  },
];

export const DELTA_FIELDS: FieldTable = {
  rows: DELTA_FIELD_RULES,
  closed: { code: CODE, detail: (field) => `Поле ${field} не принимается моделями gamma и eta.` },
};

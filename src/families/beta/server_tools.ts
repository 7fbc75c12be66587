/**
 * Family beta's provider-executed server tools on the Messages surface (spec §4.5 rules 1–6, §8.4), as data:
 * `SERVER_TOOLS` lists the two accepted tools with every field they may carry and its rule; one interpreter
 * reads it. Run on the client's raw body before anything is held or sent.
 *
 * Which tools are ours: an entry of `tools` whose `type` is a versioned server-tool type (`^[a-z_]+_\d{8}$`).
 * Client tools (no `type`, `custom`) and any other `type` are left to the Messages decoder.
 *
 * Refusals (HTTP 400, `param` = the path of the bad value):
 * - `unsupported_parameter`: a server-tool type that is not in the table (another tool, another version)
 *   at `tools.N.type`; a field the table does not name (`user_location`, `cache_control`, …) at
 *   `tools.N.<field>`, also inside `citations` (`tools.N.citations.<field>`).
 * - `invalid_parameter`: a second tool of the same type (`tools.N.type` of the later one); a required field
 *   missing or null, or a value outside its rule (`tools.N.max_uses`, `tools.N.name`, …); both domain lists
 *   (`tools.N.blocked_domains`); a domain list that is not a list, is empty or longer than 100
 *   (`tools.N.allowed_domains`); a bad entry (`tools.N.allowed_domains.K`).
 * A tool is checked in this order: type, duplicate, unknown fields (in the client's key order), mutually
 * exclusive pairs, then the table's fields in table order; the first failure is thrown.
 *
 * Decisions beyond the spec's words:
 * - `null` on an optional field counts as not sent (the official SDK types allow it) and is forwarded as it is;
 *   on a required field it is refused as missing. An unknown field is refused whatever its value.
 * - An empty domain list is refused: it could mean "nothing" as well as "no restriction", so the client drops
 *   the field instead.
 * - A domain is an ASCII host name: dot-separated labels of letters, digits and inner hyphens (≤ 63 each,
 *   ≤ 253 in all, upper case allowed, IDN as punycode `xn--…`), its last label not numeric (so no IPv4 in any
 *   notation), no `:` (IPv6, a port), no leading or trailing dot; a single label (`localhost`) is a name too.
 * - Web search entries may add a path: `example.com/docs`, `example.com/docs/api` (a path prefix) or the same
 *   followed by `/*` (`example.com/docs/*`). Segments are non-empty URL path characters (RFC 3986 pchar without
 *   `*`), not `.` or `..`; `*` only as the whole last segment, after at least one real segment
 *   (`example.com/*` is refused: write `example.com`); no trailing `/`. Web fetch entries are bare domains.
 */
import type { ErrorCode } from "../../errors/codes.ts";
import { GatewayError } from "../../errors/gateway_error.ts";
import { isObject } from "../../util/json.ts";
import { type Json, jsonEqual } from "../checks.ts";

/** A versioned server-tool type; the same pattern the Messages decoder skips. */
const SERVER_TOOL_TYPE = /^[a-z_]+_\d{8}$/;
export const WEB_SEARCH_TYPE = "web_search_20250305";
export const WEB_FETCH_TYPE = "web_fetch_20250910";
export const MAX_DOMAINS = 100;

/** How one value is checked. `accepted` texts are Russian: what the client may send instead. */
export type Rule =
  /** Exactly this JSON value. */
  | { kind: "const"; value: Json }
  | { kind: "integer"; min: number; max: number }
  | { kind: "boolean" }
  /** A list of 1–`MAX_DOMAINS` domains; `paths`: web search's `<domain>/<path>[/*]` forms too. */
  | { kind: "domains"; paths: boolean }
  | ObjectRule;

export interface FieldSpec {
  rule: Rule;
  /** Missing or null is refused with `invalid_parameter`. */
  required?: true;
}

export interface ObjectRule {
  kind: "object";
  /** Russian, where the object is: «инструмента web_search_20250305», «citations». */
  label: string;
  /** Every field the object may carry, in the order they are checked; any other key is refused. */
  fields: Readonly<Record<string, FieldSpec>>;
  /** Pairs of fields at most one of which may be sent (null counts as not sent). */
  exclusive?: readonly (readonly [string, string])[];
}

export interface ServerToolKind {
  type: string;
  name: string;
  rule: ObjectRule;
}

function kind(
  type: string,
  name: string,
  fields: Record<string, FieldSpec>,
  exclusive: ObjectRule["exclusive"],
): ServerToolKind {
  return {
    type,
    name,
    rule: {
      kind: "object",
      label: `инструмента ${type}`,
      fields: {
        type: { rule: { kind: "const", value: type }, required: true },
        name: { rule: { kind: "const", value: name }, required: true },
        ...fields,
      },
      exclusive,
    },
  };
}

const DOMAIN_LISTS = [["allowed_domains", "blocked_domains"]] as const;
const CALLERS: FieldSpec = { rule: { kind: "const", value: ["direct"] } };

/** The two server tools of spec §4.5 with their limits (§8.4). */
export const SERVER_TOOLS: readonly ServerToolKind[] = [
  kind(WEB_SEARCH_TYPE, "web_search", {
    max_uses: { rule: { kind: "integer", min: 1, max: 5 }, required: true },
    allowed_domains: { rule: { kind: "domains", paths: true } },
    blocked_domains: { rule: { kind: "domains", paths: true } },
    allowed_callers: CALLERS,
  }, DOMAIN_LISTS),
  kind(WEB_FETCH_TYPE, "web_fetch", {
    max_uses: { rule: { kind: "integer", min: 1, max: 3 }, required: true },
    max_content_tokens: { rule: { kind: "integer", min: 1, max: 25_000 }, required: true },
    allowed_domains: { rule: { kind: "domains", paths: false } },
    blocked_domains: { rule: { kind: "domains", paths: false } },
    allowed_callers: CALLERS,
    citations: {
      rule: {
        kind: "object",
        label: "citations",
        fields: { enabled: { rule: { kind: "boolean" }, required: true } },
      },
    },
  }, DOMAIN_LISTS),
];

const BY_TYPE = new Map(SERVER_TOOLS.map((k) => [k.type, k]));

function refuse(code: ErrorCode, param: string, detail: string): never {
  throw new GatewayError(code, { param, detail });
}

const lastPart = (path: string) => path.slice(path.lastIndexOf(".") + 1);
const fmt = (n: number) => n.toLocaleString("ru-RU").replace(/\s/g, " ");

/** What a rule accepts, in Russian, for the refusal's detail. */
function accepted(rule: Rule): string {
  switch (rule.kind) {
    case "const":
      return `ровно ${JSON.stringify(rule.value)}`;
    case "integer":
      return `целое число от ${fmt(rule.min)} до ${fmt(rule.max)}`;
    case "boolean":
      return "true или false";
    case "domains":
      return `список от 1 до ${MAX_DOMAINS} доменов (${domainForms(rule.paths)})`;
    case "object":
      return `объект только с полями ${Object.keys(rule.fields).join(", ")}`;
  }
}

const domainForms = (paths: boolean) =>
  paths
    ? "example.com, example.com/docs или example.com/docs/*"
    : "только домен без пути, например example.com";

function checkValue(rule: Rule, v: unknown, path: string): void {
  const bad = (what: string) => refuse("invalid_parameter", path, `${what}: ожидается ${accepted(rule)}.`);
  switch (rule.kind) {
    case "const":
      if (!jsonEqual(v, rule.value)) bad(`Недопустимое значение ${lastPart(path)}`);
      return;
    case "integer":
      if (typeof v !== "number" || !Number.isInteger(v)) bad(`${lastPart(path)} не целое число`);
      else if (v < rule.min || v > rule.max) bad(`${lastPart(path)} = ${v} вне допустимого диапазона`);
      return;
    case "boolean":
      if (typeof v !== "boolean") bad(`${lastPart(path)} не логическое значение`);
      return;
    case "domains":
      return checkDomains(rule.paths, v, path);
    case "object":
      return checkObject(rule, v, path);
  }
}

function checkObject(rule: ObjectRule, v: unknown, path: string): void {
  if (!isObject(v)) {
    refuse("invalid_parameter", path, `${rule.label} должно быть объектом: ожидается ${accepted(rule)}.`);
  }
  for (const key of Object.keys(v)) {
    if (!Object.hasOwn(rule.fields, key)) {
      refuse(
        "unsupported_parameter",
        `${path}.${key}`,
        `Поле ${key} не поддерживается у ${rule.label}; допустимые поля: ${
          Object.keys(rule.fields).join(", ")
        }.`,
      );
    }
  }
  const sent = (key: string) => v[key] !== undefined && v[key] !== null;
  for (const [a, b] of rule.exclusive ?? []) {
    if (sent(a) && sent(b)) {
      refuse(
        "invalid_parameter",
        `${path}.${b}`,
        `Поля ${a} и ${b} взаимоисключающие: укажите только одно из них.`,
      );
    }
  }
  for (const [key, spec] of Object.entries(rule.fields)) {
    const sub = `${path}.${key}`;
    if (!sent(key)) {
      if (spec.required) {
        refuse("invalid_parameter", sub, `Поле ${key} обязательно у ${rule.label}: ${accepted(spec.rule)}.`);
      }
      continue;
    }
    checkValue(spec.rule, v[key], sub);
  }
}

function checkDomains(paths: boolean, v: unknown, path: string): void {
  const field = lastPart(path);
  const tail = `ожидается список от 1 до ${MAX_DOMAINS} доменов (${domainForms(paths)}).`;
  if (!Array.isArray(v)) refuse("invalid_parameter", path, `${field} не список: ${tail}`);
  if (v.length === 0) {
    refuse(
      "invalid_parameter",
      path,
      `Список ${field} пуст: укажите от 1 до ${MAX_DOMAINS} доменов или уберите поле.`,
    );
  }
  if (v.length > MAX_DOMAINS) {
    refuse(
      "invalid_parameter",
      path,
      `В списке ${field} ${v.length} записей, допустимо не более ${MAX_DOMAINS}.`,
    );
  }
  v.forEach((entry, i) => {
    const problem = domainProblem(entry, paths);
    if (problem !== undefined) {
      refuse(
        "invalid_parameter",
        `${path}.${i}`,
        `Запись ${field}.${i}: ${problem}; допустимо: ${domainForms(paths)}.`,
      );
    }
  });
}

const LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
/** A last label that a URL parser reads as part of an IPv4 address (decimal, octal or hex). */
const NUMERIC_LABEL = /^(?:\d+|0x[0-9a-f]*)$/i;
/** RFC 3986 pchar without `*`: unreserved, percent-encoded, sub-delims but `*`, `:` and `@`. */
const SEGMENT = /^(?:[A-Za-z0-9\-._~!$&'()+,;=:@]|%[0-9A-Fa-f]{2})+$/;

/** Why one domain-list entry is refused (Russian), or undefined when it is accepted. */
export function domainProblem(entry: unknown, paths: boolean): string | undefined {
  if (typeof entry !== "string") return "запись должна быть строкой";
  if (entry === "") return "пустая строка";
  const codes = Array.from(entry, (c) => c.codePointAt(0)!);
  if (codes.some((c) => c > 0x7f)) {
    return "только ASCII-символы (международный домен записывается в punycode, xn--…)";
  }
  if (codes.some((c) => c <= 0x20 || c === 0x7f)) return "пробелы и управляющие символы недопустимы";
  if (entry.includes("\\")) return "обратная косая черта недопустима";
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(entry) || entry.startsWith("//")) {
    return "схема (https://) недопустима";
  }
  if (entry.includes("?")) return "строка запроса (?) недопустима";
  if (entry.includes("#")) return "фрагмент (#) недопустим";
  const slash = entry.indexOf("/");
  const host = slash < 0 ? entry : entry.slice(0, slash);
  if (host.includes("*")) return "подстановочный знак * в имени хоста недопустим";
  if (host.includes("[") || host.split(":").length > 2) return "IP-адрес недопустим, нужен домен";
  if (host.includes(":")) return "порт недопустим, нужен только домен";
  if (host.length > 253 || !host.split(".").every((l) => LABEL.test(l))) return "это не доменное имя";
  if (NUMERIC_LABEL.test(host.slice(host.lastIndexOf(".") + 1))) return "IP-адрес недопустим, нужен домен";
  if (slash < 0) return undefined;
  if (!paths) return "путь после домена у web_fetch недопустим";
  const segments = entry.slice(slash + 1).split("/");
  if (segments.at(-1) === "*") segments.pop();
  if (segments.length === 0) return "путь после домена пуст (вместо example.com/* укажите example.com)";
  for (const s of segments) {
    if (s.includes("*")) return "* допускается только последним сегментом пути (example.com/docs/*)";
    if (s === "" || s === "." || s === ".." || !SEGMENT.test(s)) return "недопустимый путь после домена";
  }
  return undefined;
}

/** Spec §4.5 rules 1–6 on the raw Messages body; throws the first refusal. */
export function checkServerTools(body: Record<string, unknown>): void {
  if (!Array.isArray(body.tools)) return;
  const seen = new Map<string, number>();
  body.tools.forEach((tool, i) => {
    if (!isObject(tool) || typeof tool.type !== "string" || !SERVER_TOOL_TYPE.test(tool.type)) return;
    const path = `tools.${i}`;
    const type = tool.type;
    const known = BY_TYPE.get(type);
    if (!known) {
      const base = type.replace(/_\d{8}$/, "");
      const sibling = SERVER_TOOLS.find((k) => k.type.replace(/_\d{8}$/, "") === base);
      refuse(
        "unsupported_parameter",
        `${path}.type`,
        sibling
          ? `Версия ${type} не поддерживается: для ${base} принимается только ${sibling.type}.`
          : `Серверный инструмент ${type} не поддерживается: принимаются только ${
            SERVER_TOOLS.map((k) => k.type).join(" и ")
          }.`,
      );
    }
    const first = seen.get(type);
    if (first !== undefined) {
      refuse(
        "invalid_parameter",
        `${path}.type`,
        `Инструмент ${type} уже указан в tools.${first}: допускается не более одного инструмента каждого типа.`,
      );
    }
    seen.set(type, i);
    checkObject(known.rule, tool, path);
  });
}

/**
 * The web search tool's `max_uses` (0 without one): the most billed searches one request can run, for the
 * hold (spec §8.1 p.6). Meant for a body `checkServerTools` accepted; anything else counts 0.
 */
export function searchUsesOf(body: Record<string, unknown>): number {
  if (!Array.isArray(body.tools)) return 0;
  const tool = body.tools.find((t) => isObject(t) && t.type === WEB_SEARCH_TYPE);
  const uses = isObject(tool) ? tool.max_uses : undefined;
  return typeof uses === "number" && Number.isInteger(uses) && uses > 0 ? uses : 0;
}

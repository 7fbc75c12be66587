/**
 * HTML built from templates whose every interpolated value is escaped (the dashboard's pages, src/dashboard/,
 * and the HTML error page, src/errors/render.ts): `html\`<p>${text}</p>\`` escapes `text`; a value that is
 * itself `Html` (a fragment built the same way) goes in as it is; arrays are joined; null, undefined and
 * false render nothing. There is no way to insert unescaped text other than building it with `html`.
 */

/** Held by this module alone: only `html` makes an `Html`, so its text is always built from escaped parts. */
const MINT = Symbol("html");

export class Html {
  constructor(readonly text: string, mint: symbol) {
    if (mint !== MINT) throw new TypeError("Html is made by the html template tag only");
  }

  toString(): string {
    return this.text;
  }
}

const ENTITIES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** Text safe in element content and in quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c]!);
}

type Value = Html | string | number | bigint | boolean | null | undefined | readonly Value[];

function render(v: Value): string {
  if (v instanceof Html) return v.text;
  if (v === null || v === undefined || v === false) return "";
  if (Array.isArray(v)) return v.map(render).join("");
  return escapeHtml(String(v));
}

export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!;
  return new Html(out, MINT);
}

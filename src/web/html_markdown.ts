/**
 * HTML → clean Markdown for /v1/alpha/fetch: linkedom (a DOM without a browser) parses, the page is
 * reduced to its main content, turndown converts. Scripts, styles, frames, forms, navigation and
 * other chrome are dropped; links and image sources are kept and made absolute; `javascript:` and
 * `data:` targets are removed (the link text stays).
 */
// @ts-types="npm:@types/turndown@^5.0.5"
import TurndownService from "turndown";
import { parseHTML } from "linkedom";

/** Elements removed with their content before conversion. */
const DROP = [
  "script",
  "style",
  "noscript",
  "template",
  "iframe",
  "frame",
  "frameset",
  "object",
  "embed",
  "applet",
  "svg",
  "canvas",
  "math",
  "form",
  "button",
  "input",
  "select",
  "textarea",
  "dialog",
  "link",
  "meta",
  "base",
  "head",
  "title",
];
/** Page chrome removed when the page has no <main>/<article> to select. */
const CHROME = [
  "nav",
  "header",
  "footer",
  "aside",
  "[role=navigation]",
  "[role=banner]",
  "[role=contentinfo]",
];

const turndown = new TurndownService({
  headingStyle: "atx",
  codeBlockStyle: "fenced",
  bulletListMarker: "-",
  emDelimiter: "*",
  hr: "---",
});

// Tight list items ("- item", "1. item") instead of turndown's default three-space padding.
turndown.addRule("listItem", {
  filter: "li",
  // deno-lint-ignore no-explicit-any
  replacement(content: string, node: any) {
    const parent = node.parentNode;
    let prefix = "- ";
    if (parent?.nodeName === "OL") {
      const start = Number(parent.getAttribute("start") ?? "1");
      const index = Array.prototype.indexOf.call(parent.children, node);
      prefix = `${(Number.isFinite(start) ? start : 1) + index}. `;
    }
    const body = content.replace(/^\n+/, "").replace(/\n+$/, "\n").replace(
      /\n/gm,
      "\n" + " ".repeat(prefix.length),
    );
    return prefix + body + (node.nextSibling && !/\n$/.test(body) ? "\n" : "");
  },
});

function absolute(value: string | null, base: string): string | undefined {
  if (value === null || value.trim() === "") return undefined;
  try {
    const u = new URL(value.trim(), base);
    if (u.protocol !== "http:" && u.protocol !== "https:" && u.protocol !== "mailto:") return undefined;
    return u.href;
  } catch {
    return undefined;
  }
}

/** Converts an HTML document to Markdown; `baseUrl` is the final URL of the page (after redirects). */
export function htmlToMarkdown(html: string, baseUrl: string): string {
  // deno-lint-ignore no-explicit-any
  const { document } = parseHTML(
    /<body[\s>]/i.test(html) ? html : `<!doctype html><html><body>${html}</body></html>`,
  ) as any;
  const title: string = (document.querySelector("title")?.textContent ?? "").trim().replace(/\s+/g, " ");
  const baseHref = document.querySelector("base[href]")?.getAttribute("href");
  const base = absolute(baseHref ?? null, baseUrl) ?? baseUrl;
  for (const el of document.querySelectorAll(DROP.join(","))) el.remove();
  // deno-lint-ignore no-explicit-any
  const mains = [...document.querySelectorAll("main, [role=main]")] as any[];
  // deno-lint-ignore no-explicit-any
  const articles = [...document.querySelectorAll("article")] as any[];
  let root = mains[0] ?? (articles.length === 1 ? articles[0] : undefined);
  if (!root) {
    for (const el of document.querySelectorAll(CHROME.join(","))) el.remove();
    root = document.body ?? document.documentElement;
  }
  if (!root) return title;
  for (const a of root.querySelectorAll("a")) {
    const href = absolute(a.getAttribute("href"), base);
    if (href) a.setAttribute("href", href);
    else a.removeAttribute("href");
  }
  for (const img of root.querySelectorAll("img")) {
    const src = absolute(img.getAttribute("src"), base);
    if (src && !src.startsWith("mailto:")) img.setAttribute("src", src);
    else img.remove();
  }
  let md = turndown.turndown(root).replace(/\n{3,}/g, "\n\n").trim();
  if (title !== "" && !/^# /m.test(md)) md = `# ${title}\n\n${md}`;
  return md;
}

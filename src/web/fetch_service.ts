/**
 * The page fetch of /v1/alpha/fetch (spec §2.4, §8.3) as a service with injected dependencies.
 *
 * Production always passes PRODUCTION_FETCH (system DNS, public-address policy, ports 80/443,
 * system TLS roots). Tests inject a fake resolver, a policy and a port set to reach their own
 * loopback server through exactly the same code; there is no flag or setting that skips a check.
 */
import type { DocumentExtractor } from "../app.ts";
import { GatewayError } from "../errors/gateway_error.ts";
import { FetchFailed, type FetchStats, pinnedGet, type PinnedResponse } from "./pinned_fetch.ts";
import {
  type Destination,
  type GuardDeps,
  guardDestination,
  PRODUCTION_GUARD,
  ResolveFailed,
} from "./resolve_guard.ts";
import { UrlRejected } from "./url_rules.ts";
import { readBounded } from "../util/read_bounded.ts";

export const MAX_PAGE_BYTES = 2 * 1024 * 1024;
export const MAX_REDIRECTS = 5;
export const CONNECT_TIMEOUT_MS = 5_000;
export const FIRST_BYTE_TIMEOUT_MS = 10_000;
export const TOTAL_TIMEOUT_MS = 30_000;
export const MARKDOWN_CONTENT_TYPE = "text/markdown; charset=utf-8";

export interface FetchDeps extends GuardDeps {
  maxPageBytes: number;
  maxRedirects: number;
  connectTimeoutMs: number;
  firstByteTimeoutMs: number;
  totalTimeoutMs: number;
  /** Extra trusted TLS roots (PEM); tests only. */
  caCerts?: string[];
  /** The gateway's document extraction (app.documents), for a PDF page; without it a PDF is refused (415). */
  documents?: DocumentExtractor;
  stats?: FetchStats;
}

export const PRODUCTION_FETCH: FetchDeps = Object.freeze({
  ...PRODUCTION_GUARD,
  maxPageBytes: MAX_PAGE_BYTES,
  maxRedirects: MAX_REDIRECTS,
  connectTimeoutMs: CONNECT_TIMEOUT_MS,
  firstByteTimeoutMs: FIRST_BYTE_TIMEOUT_MS,
  totalTimeoutMs: TOTAL_TIMEOUT_MS,
});

export interface FetchResult {
  content: string;
  content_type: typeof MARKDOWN_CONTENT_TYPE;
  /** True when the server closed the connection before the whole body arrived. */
  truncated: boolean;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const HTML_TYPES = new Set(["text/html", "application/xhtml+xml"]);
const TEXT_TYPES = new Set(["text/plain", "text/markdown", "text/x-markdown", "text/csv"]);
const PDF_TYPE = "application/pdf";

/**
 * PDF through the document extractor (src/documents/: the same extraction processes, queue, time and
 * memory limits and document limits as an upload — pages, decompression, extracted size); pages are
 * separated by a blank line. A PDF the extractor refuses → 415; a full extraction queue stays 429.
 */
async function pdfToText(bytes: Uint8Array, documents: DocumentExtractor | undefined): Promise<string> {
  if (!documents) throw new GatewayError("managed_service_unsupported_content", { detail: "PDF" });
  try {
    const sections = await documents.sections("fetch", "pdf", bytes, { transfer: true });
    return sections.map((s) => s.text.trim()).filter((t) => t !== "").join("\n\n");
  } catch (err) {
    if (
      err instanceof GatewayError && (err.code === "file_limit_exceeded" || err.code === "file_unreadable")
    ) {
      throw new GatewayError("managed_service_unsupported_content", {
        detail: `PDF: ${err.detail ?? err.code}`,
      });
    }
    throw err;
  }
}

export function destinationRejected(reason: string): GatewayError {
  return new GatewayError("managed_service_destination_rejected", { param: "url", detail: reason });
}

function mapFetchFailed(err: FetchFailed): GatewayError {
  switch (err.kind) {
    case "too_large":
      return new GatewayError("managed_service_unavailable");
    case "timeout":
      return new GatewayError("managed_service_timeout", { detail: err.message });
    default:
      return new GatewayError("managed_service_fetch_failed", { detail: err.message });
  }
}

async function guardHop(raw: string, deps: FetchDeps, first: boolean): Promise<Destination> {
  try {
    return await guardDestination(raw, deps);
  } catch (err) {
    if (err instanceof UrlRejected) {
      if (first && err.verdict === "malformed") {
        throw new GatewayError("invalid_managed_service_request", { param: "url", detail: err.reason });
      }
      throw destinationRejected(first ? err.reason : `redirect: ${err.reason}`);
    }
    if (err instanceof ResolveFailed) {
      throw new GatewayError("managed_service_fetch_failed", { detail: err.message });
    }
    throw err;
  }
}

/** Fetches a page and converts it to Markdown; every error is a GatewayError. */
export async function fetchPage(rawUrl: string, deps: FetchDeps = PRODUCTION_FETCH): Promise<FetchResult> {
  const deadline = Date.now() + deps.totalTimeoutMs;
  let raw = rawUrl;
  for (let hop = 0; hop <= deps.maxRedirects; hop++) {
    if (Date.now() >= deadline) throw new GatewayError("managed_service_timeout");
    const dest = await guardHop(raw, deps, hop === 0);
    let res: PinnedResponse;
    try {
      res = await pinnedGet(dest, {
        maxBodyBytes: deps.maxPageBytes,
        connectTimeoutMs: deps.connectTimeoutMs,
        firstByteTimeoutMs: deps.firstByteTimeoutMs,
        deadline,
        ...(deps.caCerts ? { caCerts: deps.caCerts } : {}),
        ...(deps.stats ? { stats: deps.stats } : {}),
      });
    } catch (err) {
      if (err instanceof FetchFailed) throw mapFetchFailed(err);
      throw err;
    }
    if (REDIRECTS.has(res.status)) {
      res.close();
      const location = res.headers.get("location");
      if (location === null) {
        throw new GatewayError("managed_service_fetch_failed", { detail: "redirect without Location" });
      }
      let next: URL;
      try {
        next = new URL(location, dest.url);
      } catch {
        throw destinationRejected("redirect: unparsable Location");
      }
      next.hash = ""; // a fragment is never sent to a server; the hop is checked without it
      raw = next.href;
      continue;
    }
    try {
      return await readPage(res, dest, deps.documents);
    } catch (err) {
      if (err instanceof FetchFailed) throw mapFetchFailed(err);
      throw err;
    } finally {
      res.close();
    }
  }
  throw new GatewayError("managed_service_fetch_failed", {
    detail: `more than ${deps.maxRedirects} redirects`,
  });
}

function mediaType(headers: Headers): { type: string | undefined; charset: string | undefined } {
  const ct = headers.get("content-type");
  if (ct === null) return { type: undefined, charset: undefined };
  const [type, ...params] = ct.split(";");
  const charset = params.map((p) => /^\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(p)?.[1]).find((c) => c);
  return { type: type!.trim().toLowerCase() || undefined, charset };
}

async function readPage(
  res: PinnedResponse,
  dest: Destination,
  documents: DocumentExtractor | undefined,
): Promise<FetchResult> {
  if (res.status < 200 || res.status > 299) {
    throw new GatewayError("managed_service_fetch_failed", { detail: `страница ответила ${res.status}` });
  }
  let { type, charset } = mediaType(res.headers);
  if (type !== undefined && !HTML_TYPES.has(type) && !TEXT_TYPES.has(type) && type !== PDF_TYPE) {
    throw new GatewayError("managed_service_unsupported_content", { detail: `тип ${type}` });
  }
  const body = await res.readBody();
  const bytes = await decodeContentEncoding(res.headers.get("content-encoding"), body.bytes, dest);
  type ??= sniff(bytes);
  if (type === PDF_TYPE) {
    return {
      content: await pdfToText(bytes, documents),
      content_type: MARKDOWN_CONTENT_TYPE,
      truncated: !body.complete,
    };
  }
  if (type === undefined || (!HTML_TYPES.has(type) && !TEXT_TYPES.has(type))) {
    throw new GatewayError("managed_service_unsupported_content", { detail: "тип содержимого не определён" });
  }
  const html = HTML_TYPES.has(type);
  charset ??= html ? metaCharset(bytes) : undefined;
  const text = decodeText(bytes, charset);
  // The converter's DOM and Markdown libraries (≈20 MiB) are loaded by the first page that needs them, not
  // at start-up (docs/performance.md, "Memory at rest"); the runtime keeps the module once loaded.
  const content = html ? (await import("./html_markdown.ts")).htmlToMarkdown(text, dest.url.href) : text;
  return { content, content_type: MARKDOWN_CONTENT_TYPE, truncated: !body.complete };
}

/** Decompresses gzip/deflate bodies (sent despite `Accept-Encoding: identity`), bounded like the page. */
async function decodeContentEncoding(
  enc: string | null,
  bytes: Uint8Array,
  _dest: Destination,
): Promise<Uint8Array> {
  const coding = (enc ?? "identity").trim().toLowerCase();
  if (coding === "identity" || coding === "") return bytes;
  const format = coding === "gzip" || coding === "x-gzip"
    ? "gzip"
    : coding === "deflate"
    ? "deflate"
    : undefined;
  if (format === undefined) throw new FetchFailed("protocol", `unsupported Content-Encoding ${coding}`);
  const stream = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(
    new DecompressionStream(format),
  );
  try {
    return await readBounded(
      stream,
      MAX_PAGE_BYTES,
      () => new FetchFailed("too_large", "decompressed page over the size limit"),
    );
  } catch (err) {
    if (err instanceof FetchFailed) throw err;
    throw new FetchFailed("protocol", "broken compressed body");
  }
}

function sniff(bytes: Uint8Array): string | undefined {
  const head = new TextDecoder().decode(bytes.subarray(0, 1024)).trimStart().toLowerCase();
  if (head.startsWith("%pdf-")) return "application/pdf";
  if (/^(<!doctype html|<html|<head|<body|<!--|<p\b|<div\b|<h1\b)/.test(head)) return "text/html";
  if (bytes.subarray(0, 4096).includes(0)) return undefined;
  return "text/plain";
}

function metaCharset(bytes: Uint8Array): string | undefined {
  const head = new TextDecoder("latin1").decode(bytes.subarray(0, 4096));
  return /<meta[^>]+charset\s*=\s*["']?\s*([a-z0-9_:.-]+)/i.exec(head)?.[1];
}

function decodeText(bytes: Uint8Array, charset: string | undefined): string {
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(charset ?? "utf-8");
  } catch {
    decoder = new TextDecoder("utf-8");
  }
  return decoder.decode(bytes);
}

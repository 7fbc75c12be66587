/** Files and web settings: family alpha's file store and its search and page fetch helpers. */
import { z } from "zod";
import { ms, optionalString, optionalUrl } from "./fields.ts";

export const filesWeb = {
  FILES_TTL_MS: ms(86_400_000).describe(
    "Lifetime of an uploaded file before automatic deletion, ms (spec §8.2: 24 hours); " +
      "configurable for tests. Default 24 h.",
  ),
  FILES_EXTRACT_TIMEOUT_MS: ms(30_000).describe(
    "One document extraction (PDF, DOCX, XLSX, PPTX) is killed after this long: 422 " +
      "`file_limit_exceeded`, ms (spec §8.2). Default 30 s.",
  ),
  FILES_EXTRACT_MODE: z.enum(["auto", "process", "worker"]).default("auto").describe(
    "Where documents are extracted: `process`, extraction processes with a heap and memory limit each; " +
      "`worker`, a Deno Worker per document, with weaker bounds (docs/files.md); `auto`, processes when " +
      "the gateway may start them (`--allow-run`), else workers. Default `auto` (`worker` on Deno Deploy).",
  ),
  SEARCH_UPSTREAM_URL: optionalUrl.describe(
    "Base URL of the search API behind POST /v1/alpha/search (spec §4.4). Unset: in demo mode the " +
      "simulator answers, otherwise search answers 503. Page fetch goes to the page itself, not " +
      "here.",
  ),
  SEARCH_UPSTREAM_KEY: optionalString.describe(
    "Key of the search API: a Bearer token for SearXNG (sent when set), X-Subscription-Token for " +
      "Brave.",
  ),
  SEARCH_BACKEND: z.enum(["searxng", "brave"]).default("searxng").describe(
    "The API `SEARCH_UPSTREAM_URL` speaks: `searxng` (GET /search?q=…&format=json) or `brave` " +
      "(Brave Search API). Default `searxng`.",
  ),
};

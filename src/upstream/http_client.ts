/** Which HTTP client the upstream calls use (Config UPSTREAM_CLIENT; README "Upstream connections"). */
import { type UpstreamFetch, WireClient } from "./wire_client.ts";

const PROXY_VARIABLES = ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"];

export interface UpstreamHttp {
  kind: "wire" | "fetch";
  fetch: UpstreamFetch;
  /** Closes the idle connections (the gateway's shutdown). */
  close(): void;
}

/**
 * The wire client, unless `fetch` was chosen or a proxy is configured in the environment: Deno's fetch goes
 * through it, the wire client connects directly and would bypass it.
 */
export function upstreamHttp(
  choice: "wire" | "fetch",
  env: (name: string) => string | undefined,
): UpstreamHttp {
  if (choice === "fetch" || PROXY_VARIABLES.some((name) => env(name))) {
    return { kind: "fetch", fetch: (url, init) => fetch(url, init as RequestInit), close() {} };
  }
  const client = new WireClient();
  return { kind: "wire", fetch: client.fetch, close: () => client.close() };
}

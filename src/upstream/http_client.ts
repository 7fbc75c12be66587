/** Which HTTP client the upstream calls use (Config UPSTREAM_CLIENT; docs/operator-guide.md "Upstream connections"). */
import { type UpstreamFetch, WireClient } from "./wire_client.ts";
import { UpstreamConnectError } from "./wire_connect.ts";

const PROXY_VARIABLES = ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"];

export interface UpstreamHttp {
  kind: "wire" | "fetch";
  fetch: UpstreamFetch;
  /** Closes the idle connections (the gateway's shutdown). */
  close(): void;
}

const viaFetch: UpstreamFetch = (url, init) => fetch(url, init as RequestInit);

/**
 * The wire client, unless `fetch` was chosen or a proxy is configured in the environment: Deno's fetch goes
 * through it, the wire client connects directly and would bypass it.
 */
export function upstreamHttp(
  choice: "wire" | "fetch",
  env: (name: string) => string | undefined,
): UpstreamHttp {
  if (choice === "fetch" || PROXY_VARIABLES.some((name) => env(name))) {
    return { kind: "fetch", fetch: viaFetch, close() {} };
  }
  const client = new WireClient();
  return { kind: "wire", fetch: withConnectFallback(client.fetch, viaFetch), close: () => client.close() };
}

/**
 * `wire`, and `fallback` once more when it could not connect to a host given by name: Deno.connect tries only
 * the first address the name resolves to (an unreachable IPv6 one, say), fetch tries them all. An IP literal, an
 * aborted call or any other failure is not tried again here (the retry rule, retry.ts, is the caller's).
 */
export function withConnectFallback(wire: UpstreamFetch, fallback: UpstreamFetch): UpstreamFetch {
  return async (url, init) => {
    try {
      return await wire(url, init);
    } catch (err) {
      if (!(err instanceof UpstreamConnectError) || init.signal.aborted || isIpLiteral(url)) throw err;
      return await fallback(url, init);
    }
  };
}

function isIpLiteral(url: string): boolean {
  const host = new URL(url).hostname;
  return host.startsWith("[") || /^\d{1,3}(\.\d{1,3}){3}$/.test(host);
}

/** A tiny exact-segment router: one table, `:name` segments capture, 404 vs 405 decided by path match. */
import type { Envelope } from "../errors/render.ts";
import type { RouteContext } from "../request/context.ts";

export type { RouteContext };

/** Who may call a route: a key holder (by the key, or signed in to the dashboard), the operator, or anyone. */
export type RouteAuth = "key" | "session" | "admin" | "none";

export interface Route<H> {
  method: string;
  path: string;
  envelope: Envelope;
  auth: RouteAuth;
  handler: H;
  /**
   * The `surface` its requests are counted and logged under (a generation surface, `models`, `files`…);
   * none for the operator's probes (health, readiness, metrics), which are neither (src/telemetry/).
   */
  label?: string;
}

interface Compiled<H> extends Route<H> {
  segments: string[];
}

/**
 * The path with every run of slashes read as one: a base URL configured with a trailing slash
 * (`https://gw.example/v1/`) makes clients that append `/chat/completions` send `/v1//chat/completions`, and
 * nginx's default `merge_slashes on` serves it. The gateway routes, logs and records usage under the merged
 * path whether or not a proxy stands in front.
 */
export function mergeSlashes(path: string): string {
  return path.includes("//") ? path.replace(/\/{2,}/g, "/") : path;
}

export type Match<H> =
  | { kind: "found"; route: Route<H>; params: Record<string, string> }
  | { kind: "method_not_allowed"; allow: string[]; envelope: Envelope }
  | { kind: "not_found" };

export class Router<H> {
  readonly #exact = new Map<string, Compiled<H>[]>();
  readonly #patterns: Compiled<H>[] = [];

  constructor(routes: Route<H>[]) {
    for (const r of routes) {
      const c = { ...r, segments: r.path.split("/") };
      if (r.path.includes(":")) this.#patterns.push(c);
      else this.#exact.set(r.path, [...(this.#exact.get(r.path) ?? []), c]);
    }
  }

  match(method: string, path: string): Match<H> {
    let candidates: { route: Compiled<H>; params: Record<string, string> }[] = (this.#exact.get(path) ?? [])
      .map((
        route,
      ) => ({ route, params: {} }));
    if (candidates.length === 0) {
      const parts = path.split("/");
      for (const route of this.#patterns) {
        const params = matchSegments(route.segments, parts);
        if (params) candidates.push({ route, params });
      }
    }
    if (candidates.length === 0) return { kind: "not_found" };
    const hit = candidates.find((c) => c.route.method === method) ??
      (method === "HEAD" ? candidates.find((c) => c.route.method === "GET") : undefined);
    if (hit) return { kind: "found", route: hit.route, params: hit.params };
    candidates = candidates.filter((c, i, all) =>
      all.findIndex((o) => o.route.method === c.route.method) === i
    );
    return {
      kind: "method_not_allowed",
      allow: candidates.map((c) => c.route.method),
      envelope: candidates[0]!.route.envelope,
    };
  }
}

function matchSegments(pattern: string[], parts: string[]): Record<string, string> | undefined {
  if (pattern.length !== parts.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!;
    const v = parts[i]!;
    if (p.startsWith(":")) {
      if (v === "") return undefined;
      try {
        params[p.slice(1)] = decodeURIComponent(v);
      } catch {
        return undefined;
      }
    } else if (p !== v) return undefined;
  }
  return params;
}

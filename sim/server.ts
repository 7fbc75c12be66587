/**
 * Built-in upstream simulator: Anthropic Messages, OpenAI Chat Completions and OpenAI
 * Responses on one Deno.serve listener. Standalone; imports nothing from src/.
 */

import { chat } from "./chat.ts";
import { errorResponse } from "./errors.ts";
import { messages } from "./messages.ts";
import { INVALID_JSON, type Protocol, serveProtocol } from "./pipeline.ts";
import { responses } from "./responses.ts";
import { search } from "./search.ts";
import { newState, type SimState } from "./stream.ts";

export interface RecordedRequest {
  path: string;
  headers: Record<string, string>;
  body: unknown;
}

export interface Simulator {
  /** Base URL without trailing slash, e.g. http://127.0.0.1:40123 */
  url: string;
  port: number;
  /** The last 1000 protocol requests (oldest first); cleared in place. */
  requests: RecordedRequest[];
  /** Bodies cut short by the client (stream cancelled, or disconnect during `delay`). */
  readonly aborted: number;
  /** Streamed bodies currently open. */
  readonly active: number;
  close(): Promise<void>;
}

export interface SimulatorOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  hostname?: string;
}

export const MAX_RECORDED = 1000;

const ROUTES: Record<string, Protocol> = {
  "/v1/chat/completions": chat,
  "/v1/messages": messages,
  "/v1/responses": responses,
};

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return INVALID_JSON;
  }
}

function record(requests: RecordedRequest[], entry: RecordedRequest): void {
  requests.push(entry);
  if (requests.length > MAX_RECORDED) requests.splice(0, requests.length - MAX_RECORDED);
}

function adminRequests(req: Request, requests: RecordedRequest[]): Response {
  if (req.method === "GET") return Response.json(requests);
  if (req.method === "DELETE") {
    requests.length = 0;
    return new Response(null, { status: 204 });
  }
  return new Response("method not allowed", { status: 405 });
}

function handler(state: SimState, requests: RecordedRequest[]) {
  return async (req: Request): Promise<Response> => {
    const path = new URL(req.url).pathname;
    if (path === "/search") {
      record(requests, { path, headers: Object.fromEntries(req.headers), body: new URL(req.url).search });
      return search(req);
    }
    const proto = ROUTES[path];
    if (proto === undefined || req.method !== "POST") {
      if (path === "/__sim/requests") return adminRequests(req, requests);
      const flavor = path.startsWith("/v1/messages") ? "anthropic" : "openai";
      return errorResponse(flavor, 404, `Unknown route ${req.method} ${path}`);
    }
    const text = await req.text();
    const body = parse(text);
    const headers: Record<string, string> = {};
    req.headers.forEach((v, k) => headers[k] = v);
    record(requests, { path, headers, body: body === INVALID_JSON ? text : body });
    return await serveProtocol(proto, req, body, state);
  };
}

export function startSimulator(opts: SimulatorOptions = {}): Promise<Simulator> {
  const state = newState();
  const requests: RecordedRequest[] = [];
  return new Promise((resolve) => {
    const server = Deno.serve({
      port: opts.port ?? 0,
      hostname: opts.hostname ?? "127.0.0.1",
      onListen({ hostname, port }) {
        const host = hostname.includes(":") ? `[${hostname}]` : hostname;
        resolve({
          url: `http://${host}:${port}`,
          port,
          requests,
          get aborted() {
            return state.aborted;
          },
          get active() {
            return state.active;
          },
          async close() {
            state.closing.abort();
            for (const kill of [...state.open]) kill();
            await server.shutdown();
          },
        });
      },
    }, handler(state, requests));
  });
}

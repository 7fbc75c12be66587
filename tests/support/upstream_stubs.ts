/** Stand-in upstreams for tests that need an answer the simulator does not give. */

/** An upstream that streams Chat chunks only as fast as they are pulled, counting bytes produced. */
export function countingUpstream(totalChunks: number) {
  let produced = 0;
  let cancelled = false;
  const chunk = (i: number) =>
    `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"k3","choices":[{"index":0,"delta":{"content":"слово ${i} "},"finish_reason":null}]}\n\n`;
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, () => {
    let i = 0;
    const enc = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (i >= totalChunks) {
          c.enqueue(
            enc.encode(
              'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"k3","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n',
            ),
          );
          c.close();
          return;
        }
        const bytes = enc.encode(chunk(i++));
        produced += bytes.byteLength;
        c.enqueue(bytes);
      },
      cancel() {
        cancelled = true;
      },
    }, { highWaterMark: 0 });
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  });
  return {
    url: `http://127.0.0.1:${(server.addr as Deno.NetAddr).port}`,
    get produced() {
      return produced;
    },
    get cancelled() {
      return cancelled;
    },
    close: () => server.shutdown(),
  };
}

/** An upstream that answers every request with `answer()` (a fixed JSON body, for example). */
export function fixedUpstream(answer: (req: Request) => Response | Promise<Response>) {
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, answer);
  return {
    url: `http://127.0.0.1:${(server.addr as Deno.NetAddr).port}`,
    close: () => server.shutdown(),
  };
}

/**
 * An upstream whose next `failures` requests get `status` (an OpenAI-shaped error body) and every other one
 * is passed to `target` (the simulator), so any protocol answers for real; counts the requests it received.
 */
export function flakyUpstream(target: string) {
  let requests = 0;
  let failures = 0;
  let status = 503;
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, async (req) => {
    requests++;
    const body = await req.arrayBuffer();
    if (failures > 0) {
      failures--;
      return Response.json({ error: { message: "overloaded", type: "server_error" } }, { status });
    }
    const headers = new Headers();
    for (const name of ["content-type", "authorization", "x-api-key", "anthropic-version"]) {
      const v = req.headers.get(name);
      if (v !== null) headers.set(name, v);
    }
    const res = await fetch(target + new URL(req.url).pathname, { method: "POST", headers, body });
    return new Response(res.body, { status: res.status, headers: res.headers });
  });
  return {
    url: `http://127.0.0.1:${(server.addr as Deno.NetAddr).port}`,
    get requests() {
      return requests;
    },
    /** The next `n` requests fail with `code`; the request count starts again from zero. */
    failNext(n: number, code = 503) {
      failures = n;
      status = code;
      requests = 0;
    },
    close: () => server.shutdown(),
  };
}

/** One call an account upstream saw: which account (its key), the model asked for, and when it ran. */
export interface AccountCall {
  account: string;
  model: string;
  /** The request's own marker (the text `[[id:…]]` in its prompt), to tell the calls apart. */
  marker: string | undefined;
  start: number;
  end: number;
}

/**
 * Theta's upstream accounts in front of the simulator: records every call with its account (the bearer key)
 * and model, the most calls one account ever ran at once, and answers 429 (Retry-After: `retryAfter`) for the
 * account/model pairs in `refuse` (`"<key>|<model>"`, or `"*|<model>"` for every account), recording those
 * refusals (`"<key>|<model>"`, in order) apart from the calls.
 */
export function accountUpstream(target: string, opts: { refuse?: Set<string>; retryAfter?: number } = {}) {
  const calls: AccountCall[] = [];
  const refused: string[] = [];
  const running = new Map<string, number>();
  let maxConcurrent = 0;
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, async (req) => {
    const bytes = await req.arrayBuffer();
    const account = (req.headers.get("authorization") ?? "").replace(/^Bearer /, "");
    const text = new TextDecoder().decode(bytes);
    const model = (JSON.parse(text) as { model?: string }).model ?? "";
    const marker = /\[\[id:([^\]]+)\]\]/.exec(text)?.[1];
    if (opts.refuse?.has(`${account}|${model}`) || opts.refuse?.has(`*|${model}`)) {
      refused.push(`${account}|${model}`);
      return Response.json(
        { error: { message: "model limit exhausted", type: "rate_limit_error" } },
        { status: 429, headers: { "retry-after": String(opts.retryAfter ?? 60) } },
      );
    }
    const now = running.get(account) ?? 0;
    running.set(account, now + 1);
    maxConcurrent = Math.max(maxConcurrent, now + 1);
    const call: AccountCall = { account, model, marker, start: performance.now(), end: Infinity };
    calls.push(call);
    const done = () => {
      if (call.end !== Infinity) return;
      call.end = performance.now();
      running.set(account, running.get(account)! - 1);
    };
    try {
      const res = await fetch(target + new URL(req.url).pathname, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${account}` },
        body: bytes,
        signal: req.signal,
      });
      // The account is busy until the answer's last byte went out (or the gateway hung up).
      const body = res.body?.pipeThrough(new TransformStream({ flush: done }));
      req.signal.addEventListener("abort", done);
      if (!body) done();
      return new Response(body ?? null, { status: res.status, headers: res.headers });
    } catch (err) {
      done();
      throw err;
    }
  });
  return {
    url: `http://127.0.0.1:${(server.addr as Deno.NetAddr).port}`,
    calls,
    refused,
    get maxConcurrent() {
      return maxConcurrent;
    },
    close: () => server.shutdown(),
  };
}

import assert from "node:assert/strict";
import { isConnectFailure, withOneRetry } from "./retry.ts";

/** A local listener's port, then closed: connecting to it is refused. */
function closedPort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/** Counts the retry's draws of the jitter source: one draw per retry. */
function counter() {
  const c = { draws: 0, random: () => (c.draws++, 0.5) };
  return c;
}

Deno.test("retry: Deno's fetch names a refused connection a connect failure; it is retried once, then rejects", async () => {
  const c = counter();
  const url = `http://127.0.0.1:${closedPort()}/v1/chat/completions`;
  let attempts = 0;
  const err = await withOneRetry(
    () => (attempts++, fetch(url, { method: "POST", body: "{}" })),
    new AbortController().signal,
    c.random,
  )
    .then(() => undefined, (e) => e);
  assert.ok(isConnectFailure(err), String(err?.cause ?? err));
  assert.equal(attempts, 2);
  assert.equal(c.draws, 1);
});

Deno.test("retry: a connection closed under the request (it may have been written) is not retried", async () => {
  let accepted = 0;
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  (async () => {
    for await (const conn of l) {
      accepted++;
      await conn.read(new Uint8Array(4096)).catch(() => null);
      conn.close();
    }
  })();
  const c = counter();
  const url = `http://127.0.0.1:${(l.addr as Deno.NetAddr).port}/v1/chat/completions`;
  const err = await withOneRetry(
    () => fetch(url, { method: "POST", body: "{}" }),
    new AbortController().signal,
    c.random,
  )
    .then(() => undefined, (e) => e);
  l.close();
  assert.ok(err instanceof Error);
  assert.equal(isConnectFailure(err), false);
  assert.equal(accepted, 1);
  assert.equal(c.draws, 0);
});

Deno.test("retry: 502 and 503 are retried once (the second answer is final); other statuses and 2xx are not", async () => {
  for (
    const [statuses, final, attempts] of [
      [[503, 200], 200, 2],
      [[502, 503], 503, 2],
      [[503, 503, 200], 503, 2],
      [[500, 200], 500, 1],
      [[429, 200], 429, 1],
      [[504, 200], 504, 1],
      [[200], 200, 1],
    ] as const
  ) {
    const c = counter();
    let n = 0;
    const res = await withOneRetry(
      () => Promise.resolve(new Response("x", { status: statuses[n++]! })),
      new AbortController().signal,
      c.random,
    );
    assert.deepEqual([res.status, n, c.draws], [final, attempts, attempts - 1], statuses.join(","));
  }
});

Deno.test("retry: never after an abort (timeout or client gone), and an abort during the backoff ends it", async () => {
  const timedOut = new AbortController();
  timedOut.abort(new DOMException("upstream headers timeout", "TimeoutError"));
  let n = 0;
  const connectErr = new TypeError("fetch failed", {
    cause: new Error("client error (Connect): tcp connect error"),
  });
  const err = await withOneRetry(() => (n++, Promise.reject(connectErr)), timedOut.signal, Math.random)
    .then(() => undefined, (e) => e);
  assert.equal(err, connectErr);
  assert.equal(n, 1);

  const gone = new AbortController();
  n = 0;
  const during = await withOneRetry(
    () => (n++,
      n === 1 && queueMicrotask(() => gone.abort(new DOMException("gone", "AbortError"))),
      Promise.resolve(new Response("x", { status: 503 }))),
    gone.signal,
    () => 0.99,
  ).then(() => undefined, (e) => e);
  assert.equal((during as DOMException).name, "AbortError");
  assert.equal(n, 1);
});

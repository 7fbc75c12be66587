/**
 * ClientWatch (src/request/client_watch.ts): a request's signal is read only once the request has lasted the
 * watch's delay, and a client that left before that is still noticed when it is read, on Deno's own server.
 */
import assert from "node:assert/strict";
import { ClientWatch } from "../../src/request/client_watch.ts";

/** A request whose `signal` reads are counted. */
function countedRequest(signal: AbortSignal): { req: Request; reads: () => number } {
  let reads = 0;
  const req = {
    get signal() {
      reads++;
      return signal;
    },
  } as unknown as Request;
  return { req, reads: () => reads };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test("ClientWatch: a request stopped before the delay never reads its signal", async () => {
  const client = new AbortController();
  const { req, reads } = countedRequest(client.signal);
  let gone = 0;
  const watch = new ClientWatch(req, () => gone++, 20);
  watch.stop();
  client.abort();
  await sleep(80); // several ticks of the shared ticker past the delay
  assert.equal(reads(), 0);
  assert.equal(gone, 0);
  assert.equal(watch.aborted, false);
});

Deno.test("ClientWatch: watched after the delay; the client leaving calls `gone` once, and not after stop", async () => {
  const client = new AbortController();
  const { req, reads } = countedRequest(client.signal);
  let gone = 0;
  const watch = new ClientWatch(req, () => gone++, 10);
  await sleep(80);
  assert.equal(reads(), 1);
  assert.equal(gone, 0);
  client.abort();
  assert.equal(gone, 1);
  assert.equal(watch.aborted, true);
  watch.stop();

  const later = new AbortController();
  const second = countedRequest(later.signal);
  let goneLater = 0;
  const stopped = new ClientWatch(second.req, () => goneLater++, 10);
  await sleep(80);
  stopped.stop();
  later.abort();
  assert.equal(goneLater, 0, "a stopped watch no longer listens");
});

Deno.test("ClientWatch: a client already gone when the watch begins is noticed at once", async () => {
  const client = new AbortController();
  client.abort();
  const { req } = countedRequest(client.signal);
  let gone = 0;
  const watch = new ClientWatch(req, () => gone++, 10);
  await sleep(80);
  assert.equal(gone, 1);
  assert.equal(watch.aborted, true);
  watch.stop();
});

Deno.test("ClientWatch on Deno.serve: a client that left before the signal was first read is noticed", async () => {
  let noticed!: () => void;
  const wasNoticed = new Promise<void>((r) => noticed = r);
  let handlerStarted!: () => void;
  const started = new Promise<void>((r) => handlerStarted = r);
  let aborted: boolean | undefined;
  let handlerDone!: () => void;
  const done = new Promise<void>((r) => handlerDone = r);
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    await req.arrayBuffer();
    handlerStarted();
    // The client leaves at once; the watch reads the signal only after its delay.
    const watch = new ClientWatch(req, () => noticed(), 150);
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([wasNoticed, new Promise((r) => timer = setTimeout(r, 5_000))]);
    clearTimeout(timer);
    aborted = watch.aborted;
    watch.stop();
    handlerDone();
    return new Response("late");
  });
  const leave = new AbortController();
  const call = fetch(`http://127.0.0.1:${server.addr.port}/`, {
    method: "POST",
    body: "{}",
    signal: leave.signal,
  })
    .then(() => "answered", (err) => (err as Error).name);
  await started;
  leave.abort();
  assert.equal(await call, "AbortError");
  await done;
  assert.equal(aborted, true);
  await server.shutdown();
});

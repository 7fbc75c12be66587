/**
 * Which ways of yielding let Deno's HTTP task write a chunk while JavaScript still has work ready
 * (src/util/yield_turn.ts; bench/RESULTS.md, "Stream TTFB at c=1"). A `Deno.serve` answer enqueues its first
 * chunk (on the stream's first pull, or after a 1 ms timer fired, as after I/O), yields one way, then runs
 * 3 ms of synchronous work before the rest; a client in another process (in
 * this one, the busy loop would hold the client as well) reads 50 answers after 10 of warm-up and prints the
 * median time to the first chunk and to the end. A yield that works brings the first chunk ≈3 ms earlier; one
 * that waits for a timer adds its wait to the end.
 *
 *   deno run -A bench/yield_probe.ts [none | timeout | immediate | digest | message-channel | atomics]…
 */
import { yieldTurn } from "../src/util/yield_turn.ts";

const MODES: Record<string, () => Promise<unknown>> = {
  none: () => Promise.resolve(),
  timeout: () => new Promise((r) => setTimeout(r, 0)),
  immediate: () => new Promise((r) => setImmediate(r)),
  digest: () => crypto.subtle.digest("SHA-256", new Uint8Array(1)), // a thread-pool round trip
  "message-channel": () =>
    new Promise((r) => {
      const { port1, port2 } = new MessageChannel();
      port1.onmessage = () => (port1.close(), r(0));
      port2.postMessage(0);
    }),
  atomics: yieldTurn,
};

const CLIENT = `
const url = Deno.args[0];
const first = [], total = [];
for (let i = 0; i < 60; i++) {
  const t0 = performance.now();
  const reader = (await fetch(url)).body.getReader();
  let t = -1;
  for (;;) {
    const { done } = await reader.read();
    if (done) break;
    if (t < 0) t = performance.now() - t0;
  }
  if (i >= 10) first.push(t), total.push(performance.now() - t0);
}
const med = (a) => a.sort((x, y) => x - y)[a.length >> 1];
console.log(JSON.stringify([med(first), med(total)]));
`;

const enc = new TextEncoder();
const busy = (ms: number) => {
  for (const t = performance.now(); performance.now() - t < ms;) { /* the rest of a burst, translated */ }
};

if (import.meta.main) {
  const names = Deno.args.length ? Deno.args : Object.keys(MODES);
  for (const afterTimer of [false, true]) {
    for (const name of names) {
      const yieldOnce = MODES[name];
      if (!yieldOnce) throw new Error(`unknown mode ${name}`);
      const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, () =>
        new Response(
          new ReadableStream<Uint8Array>({
            async pull(c) {
              if (afterTimer) await new Promise((r) => setTimeout(r, 1));
              c.enqueue(enc.encode("data: first\n\n"));
              await yieldOnce();
              busy(3);
              c.enqueue(enc.encode("data: rest\n\n"));
              c.close();
            },
          }, { highWaterMark: 0 }),
          { headers: { "content-type": "text/event-stream" } },
        ));
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["eval", CLIENT, `http://127.0.0.1:${server.addr.port}/`],
        stdout: "piped",
      }).output();
      await server.shutdown();
      const [first, total] = JSON.parse(new TextDecoder().decode(out.stdout)) as [number, number];
      const when = afterTimer ? "after a timer" : "on the first pull";
      console.log(
        `${name.padEnd(16)} ${when.padEnd(17)} first chunk ${first.toFixed(3)} ms, end ${
          total.toFixed(3)
        } ms`,
      );
    }
  }
}

/**
 * KeyedRun (keyed_run.ts) driven step by step: the answer is a ReadableStream the test enqueues into, the
 * clients are streams the test reads (or leaves unread), and every wait is bounded. A late client gets every
 * byte so far and then the rest live; an answer over maxBytes or the process's ByteBudget is not kept (the
 * clients attached still get it whole, a retry gets null); a client that stops reading is cut; with no client
 * left the run is cancelled after detachMs unless one comes back; `fail` reaches every waiting client.
 */
import assert from "node:assert/strict";
import { KeyedRun } from "./keyed_run.ts";
import { ByteBudget } from "./byte_budget.ts";
import type { StoredAnswerHead } from "../store/store.ts";

const HEAD: StoredAnswerHead = {
  status: 200,
  headers: [["content-type", "text/event-stream"], ["request-id", "req_1"]],
  stream: true,
  bytes: 0,
};
const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array | null) => b === null ? null : new TextDecoder().decode(b);
const stays = () => new AbortController().signal;
/** Lets every pending promise callback run (one macrotask turn). */
const settle = () => new Promise((r) => setTimeout(r, 0));

/** `p`, or a failure naming `what` after 5 s: no wait in these tests is unbounded. */
async function within<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), 5000);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The answer's body as the test writes it, and whether (and why) the run cancelled it. */
function answer() {
  let ctl!: ReadableStreamDefaultController<Uint8Array>;
  const cancelled = Promise.withResolvers<unknown>();
  const stream = new ReadableStream<Uint8Array>({
    start: (c) => void (ctl = c),
    cancel: (reason) => cancelled.resolve(reason),
  });
  return {
    stream,
    cancelled: cancelled.promise,
    push: (s: string) => ctl.enqueue(enc(s)),
    close: () => ctl.close(),
  };
}

function newRun(limits: { detachMs?: number; maxBytes?: number; budget?: ByteBudget } = {}) {
  const budget = limits.budget ?? new ByteBudget(1 << 20);
  const run = new KeyedRun("fp", {
    detachMs: limits.detachMs ?? 60_000,
    maxBytes: limits.maxBytes ?? 1024,
    budget,
  });
  return { run, budget };
}

/** Reads until `n` bytes came (bounded); what came, as text. */
async function readBytes(reader: ReadableStreamDefaultReader<Uint8Array>, n: number): Promise<string> {
  let got = "";
  while (enc(got).byteLength < n) {
    const { done, value } = await within(reader.read(), `${n} bytes`);
    if (done) throw new Error(`the stream ended after ${JSON.stringify(got)}`);
    got += dec(value);
  }
  return got;
}

async function readAll(body: ReadableStream<Uint8Array> | Uint8Array): Promise<string> {
  return await within(new Response(body as BodyInit).text(), "the whole body");
}

/** A client whose answer `attach` gave (the test fails if it was none): a stream's answer is read as it comes. */
async function client(run: KeyedRun, first: boolean, gone = stays()) {
  const got = await within(run.attach(gone, first), "attach");
  assert.ok(got, "attach gave an answer");
  assert.ok(got.body instanceof ReadableStream, "a stream's answer is a stream");
  return { head: got.head, body: got.body };
}

Deno.test("KeyedRun: a late client gets every byte so far, then the rest live; the answer is kept whole", async () => {
  const { run, budget } = newRun();
  const src = answer();
  run.start(HEAD, src.stream);
  const first = await client(run, true);
  src.push("data: 1\n\n");
  src.push("data: 2\n\n");
  await settle();
  const late = await client(run, false);
  assert.deepEqual(late.head, HEAD);
  const reader = late.body.getReader();
  assert.equal(await readBytes(reader, 18), "data: 1\n\ndata: 2\n\n", "every byte so far");
  src.push("data: 3\n\n");
  assert.equal(await readBytes(reader, 9), "data: 3\n\n", "then live, before the answer ends");
  src.close();
  assert.equal((await within(reader.read(), "the end")).done, true);
  assert.equal(await readAll(first.body), "data: 1\n\ndata: 2\n\ndata: 3\n\n");
  const end = await within(run.ended, "ended");
  assert.equal(dec(end!.body), "data: 1\n\ndata: 2\n\ndata: 3\n\n");
  assert.deepEqual(end!.head, { ...HEAD, bytes: 27 });
  assert.equal(budget.used, 27);
  run.release();
  assert.equal(budget.used, 0);
});

Deno.test("KeyedRun: two clients reading at their own pace get equal bytes", async () => {
  const { run } = newRun({ maxBytes: 1 << 16 });
  const src = answer();
  run.start(HEAD, src.stream);
  const [a, b] = [await client(run, true), await client(run, false)];
  const reads = [readAll(a.body), readAll(b.body)];
  let want = "";
  for (let i = 0; i < 200; i++) {
    const chunk = `event ${i} ${"x".repeat(i % 37)}\n`;
    want += chunk;
    src.push(chunk);
    if (i % 17 === 0) await settle();
  }
  src.close();
  const [textA, textB] = await Promise.all(reads);
  assert.equal(textA, want);
  assert.equal(textB, want);
  assert.equal(dec((await within(run.ended, "ended"))!.body), want);
  run.release();
});

Deno.test("KeyedRun: over maxBytes the answer is not kept, the first client still gets it all, a retry gets null", async () => {
  const { run, budget } = newRun({ maxBytes: 10 });
  const src = answer();
  run.start(HEAD, src.stream);
  const first = await client(run, true);
  const reading = readAll(first.body);
  src.push("123456");
  await settle();
  assert.equal(run.replayable, true);
  assert.equal(budget.used, 6);
  src.push("789012");
  await settle();
  assert.equal(run.replayable, false);
  assert.equal(budget.used, 0, "what was kept is given back at once");
  assert.equal(await within(run.attach(stays(), false), "a retry while it runs"), null);
  src.push("345");
  src.close();
  assert.equal(await reading, "123456789012345");
  const end = await within(run.ended, "ended");
  assert.equal(end!.body, null);
  assert.deepEqual(end!.head, { ...HEAD, bytes: 0 });
  assert.equal(await within(run.attach(stays(), false), "a retry after the end"), null);
  run.release();
  assert.equal(budget.used, 0);
});

Deno.test("KeyedRun: an answer that would pass the process's ByteBudget is not kept; the others are, and go back on release", async () => {
  const budget = new ByteBudget(10);
  const a = newRun({ budget });
  const b = newRun({ budget });
  const [srcA, srcB] = [answer(), answer()];
  a.run.start(HEAD, srcA.stream);
  b.run.start(HEAD, srcB.stream);
  const [readA, readB] = [
    readAll((await client(a.run, true)).body),
    readAll((await client(b.run, true)).body),
  ];
  srcA.push("aaaaaaaa");
  await settle();
  srcB.push("bbb");
  await settle();
  assert.equal(budget.used, 8);
  assert.equal(b.run.replayable, false);
  srcB.push("b");
  srcA.push("aa");
  srcA.close();
  srcB.close();
  assert.deepEqual(await Promise.all([readA, readB]), ["aaaaaaaaaa", "bbbb"]);
  assert.equal(dec((await within(a.run.ended, "a ended"))!.body), "aaaaaaaaaa");
  assert.equal((await within(b.run.ended, "b ended"))!.body, null);
  assert.equal(budget.used, 10);
  b.run.release();
  assert.equal(budget.used, 10);
  a.run.release();
  assert.equal(budget.used, 0);
  a.run.release();
  assert.equal(budget.used, 0, "a second release gives nothing back");
});

Deno.test("KeyedRun: a JSON answer (no body stream) ends at once; a client waiting for the head gets it", async () => {
  const { run } = newRun();
  const waiting = run.attach(stays(), false);
  run.start({ ...HEAD, stream: false }, null);
  const got = await within(waiting, "the head");
  assert.equal(got!.head.stream, false);
  assert.ok(got!.body instanceof Uint8Array, "a whole JSON answer is given as bytes");
  assert.equal(await readAll(got!.body), "");
  assert.deepEqual(await within(run.ended, "ended"), {
    head: { ...HEAD, stream: false, bytes: 0 },
    body: enc(""),
  });
});

Deno.test("KeyedRun: a client that stops reading is cut past maxBytes, as a client that left", async () => {
  const { run } = newRun({ maxBytes: 8, detachMs: 20 });
  const src = answer();
  run.start(HEAD, src.stream);
  const stalled = await client(run, true);
  src.push("1234");
  src.push("5678");
  await settle();
  assert.equal(run.abort.signal.aborted, false, "8 unread bytes are within the bound");
  src.push("9");
  // Cut: it holds nothing more, and no client is left, so the run is cancelled after detachMs.
  await within(src.cancelled, "the answer cancelled");
  assert.equal(run.abort.signal.aborted, true);
  await assert.rejects(stalled.body.getReader().read(), /does not read its answer/);
  assert.equal((await within(run.ended, "ended"))!.body, null);
});

Deno.test("KeyedRun: a late client that reads what was kept and then stops is cut once maxBytes more is unread", async () => {
  const { run } = newRun({ maxBytes: 8 });
  const src = answer();
  run.start(HEAD, src.stream);
  const first = await client(run, true);
  const reading = readAll(first.body);
  src.push("abcd");
  await settle();
  const late = (await client(run, false)).body.getReader();
  assert.equal(await readBytes(late, 4), "abcd");
  src.push("1234");
  src.push("5678");
  await settle();
  src.push("9");
  await settle();
  await assert.rejects(within(late.read(), "the cut"), /does not read its answer/);
  src.close();
  assert.equal(await reading, "abcd123456789", "the client that reads is not cut");
  await within(run.ended, "ended");
  run.release();
});

Deno.test("KeyedRun: with no client left the run is aborted after detachMs and its answer cancelled", async () => {
  const { run, budget } = newRun({ detachMs: 20 });
  const src = answer();
  run.start(HEAD, src.stream);
  const first = await client(run, true);
  src.push("part");
  await settle();
  await first.body.cancel();
  assert.equal(run.abort.signal.aborted, false, "not at once");
  await within(src.cancelled, "the answer cancelled");
  assert.equal(run.abort.signal.aborted, true);
  assert.equal((run.abort.signal.reason as DOMException).name, "AbortError");
  const end = await within(run.ended, "ended");
  assert.equal(end!.body, null, "a cut answer is no whole answer to keep");
  assert.equal(budget.used, 0);
});

Deno.test("KeyedRun: a client back before detachMs keeps the run going; once it leaves too, the run is cancelled", async () => {
  const { run } = newRun({ detachMs: 100 });
  const src = answer();
  run.start(HEAD, src.stream);
  const first = await client(run, true);
  src.push("one ");
  await settle();
  await first.body.cancel();
  const back = await client(run, false);
  const reader = back.body.getReader();
  assert.equal(await readBytes(reader, 4), "one ");
  await new Promise((r) => setTimeout(r, 250)); // past detachMs: the timer was cleared, nothing fires
  assert.equal(run.abort.signal.aborted, false);
  src.push("two");
  assert.equal(await readBytes(reader, 3), "two");
  await reader.cancel();
  await within(src.cancelled, "the answer cancelled after the second client left");
  assert.equal(run.abort.signal.aborted, true);
  assert.equal((await within(run.ended, "ended"))!.body, null);
});

Deno.test("KeyedRun: fail rejects every client waiting for the head, and any later one", async () => {
  const { run } = newRun();
  const err = new Error("refused upstream");
  const waiting = [run.attach(stays(), true), run.attach(stays(), false)];
  await settle();
  run.fail(err);
  for (const w of waiting) await assert.rejects(within(w, "the failure"), (e) => e === err);
  await assert.rejects(run.attach(stays(), false), (e) => e === err);
  assert.equal(await within(run.ended, "ended"), null);
  assert.equal(run.abort.signal.aborted, false);
});

Deno.test("KeyedRun: a client that leaves while waiting for the head counts as gone (detach starts)", async () => {
  const { run } = newRun({ detachMs: 20 });
  const left = new AbortController();
  const waiting = run.attach(left.signal, true);
  const aborted = new Promise((r) => run.abort.signal.addEventListener("abort", r, { once: true }));
  await settle();
  left.abort(new Error("client went away"));
  await assert.rejects(within(waiting, "the client's leave"), /client went away/);
  await within(aborted, "the run's abort after detachMs");
  // A client already gone when it asks counts the same.
  const { run: other } = newRun({ detachMs: 20 });
  const gone = AbortSignal.abort(new Error("gone before"));
  await assert.rejects(other.attach(gone, true), /gone before/);
  await within(
    new Promise((r) => other.abort.signal.addEventListener("abort", r, { once: true })),
    "the second run's abort",
  );
});

Deno.test("KeyedRun: while another client still waits for the head, one leaving does not start the detach", async () => {
  const { run } = newRun({ detachMs: 20 });
  const left = new AbortController();
  const leaving = run.attach(left.signal, true);
  const staying = run.attach(stays(), false);
  await settle();
  left.abort(new Error("left"));
  await assert.rejects(within(leaving, "the leave"), /left/);
  await new Promise((r) => setTimeout(r, 100)); // past detachMs: no timer was set
  assert.equal(run.abort.signal.aborted, false);
  const src = answer();
  run.start(HEAD, src.stream);
  const got = await within(staying, "the head");
  src.push("ok");
  src.close();
  assert.equal(await readAll(got!.body), "ok");
  await within(run.ended, "ended");
  run.release();
});

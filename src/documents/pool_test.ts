/** The extraction pool in both modes, its queue bound, and the frames of the process protocol. */
import assert from "node:assert/strict";
import { GatewayError } from "../errors/gateway_error.ts";
import { docx, pdf, pdfBomb } from "../../tests/fixtures/files/build.ts";
import { encodeFrame, FrameReader } from "./frames.ts";
import { ExtractionPool } from "./pool.ts";

const code = (p: Promise<unknown>) =>
  p.then(() => "ok", (e) => e instanceof GatewayError ? e.code : String(e));

Deno.test("pool (worker fallback): extracts, refuses a bomb, applies the time limit", async () => {
  const pool = new ExtractionPool({ mode: "worker" });
  assert.equal(pool.mode, "worker");
  const s = await pool.extract("f", "pdf", await pdf(["One", "Two"]));
  assert.deepEqual(s, [{ text: "One", anchor: "f#page=1" }, { text: "Two", anchor: "f#page=2" }]);
  const bytes = await docx([{ p: "x" }]);
  assert.equal((await pool.extract("f", "docx", bytes, { transfer: false }))[0]!.text, "x");
  assert.equal(bytes.byteLength > 0, true, "the caller's buffer is not taken unless transferred");
  assert.equal(await code(pool.extract("f", "pdf", await pdfBomb("hex-name"))), "file_limit_exceeded");
  const slow = await pdf(Array.from({ length: 200 }, (_, i) => `p${i}`));
  assert.equal(await code(pool.extract("f", "pdf", slow, { timeoutMs: 20 })), "file_limit_exceeded");
  assert.deepEqual(pool.load, { running: 0, queued: 0 });
});

Deno.test("pool (processes): one past the running and waiting bound is refused at once; the rest finish", async () => {
  const pool = new ExtractionPool({ mode: "process", workers: 1, queue: 1 });
  try {
    const doc = await pdf(["Queued"]);
    const jobs = [0, 1, 2].map(() => code(pool.extract("f", "pdf", doc)));
    assert.deepEqual(pool.load, { running: 1, queued: 1 });
    assert.deepEqual(await Promise.all(jobs), ["ok", "ok", "service_capacity_saturated"]);
    assert.deepEqual(pool.load, { running: 0, queued: 0 });
  } finally {
    await pool.close();
  }
});

Deno.test("pool (processes): a process past the memory limit is killed, the next job gets a fresh one", async () => {
  const pool = new ExtractionPool({ mode: "process", workers: 1, memoryBytes: 16 * 1024 * 1024 });
  try {
    assert.equal(await code(pool.extract("f", "pdf", await pdf(["x"]))), "file_limit_exceeded");
  } finally {
    await pool.close();
  }
  const fresh = new ExtractionPool({ mode: "process", workers: 1 });
  try {
    assert.equal((await fresh.extract("f", "pdf", await pdf(["after"])))[0]!.text, "after");
  } finally {
    await fresh.close();
  }
});

Deno.test("frames: split anywhere on the pipe, read back whole", async () => {
  const frames = [
    encodeFrame({ t: "section", id: 1, anchor: "f#page=1" }, new TextEncoder().encode("Привет")),
    encodeFrame({ t: "done", id: 1 }),
    encodeFrame({ id: 2, kind: "pdf" }, new Uint8Array(100_000).fill(7)),
  ];
  const all = new Uint8Array(frames.reduce((n, f) => n + f.length, 0));
  let off = 0;
  for (const f of frames) all.set(f, off), off += f.length;
  const cuts = [0, 1, 3, 5, 17, 18, 40, 41, 5000, 60_000, all.length];
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      for (let i = 1; i < cuts.length; i++) c.enqueue(all.slice(cuts[i - 1], cuts[i]));
      c.close();
    },
  });
  const r = new FrameReader(stream.getReader());
  const a = await r.read(), b = await r.read(), c = await r.read();
  assert.deepEqual(a?.header, { t: "section", id: 1, anchor: "f#page=1" });
  assert.equal(new TextDecoder().decode(a?.body), "Привет");
  assert.deepEqual(b?.header, { t: "done", id: 1 });
  assert.equal(c?.body.length, 100_000);
  assert.equal(await r.read(), null);
});

/**
 * Issue 10, items 3 and 4, through the real HTTP API (and /v1/alpha/fetch's PDF path): every spelling
 * of a PDF decompression bomb that escaped the old textual pre-scan, the XLSX whose cells all repeat
 * one long shared string, and the extraction pool's own bounds (time, memory, queue). Each hostile
 * upload answers 422 file_limit_exceeded, the gateway's own memory does not grow with the bomb, and
 * the gateway keeps answering. Timings (event-loop stalls) are measured in bench/files_bench.ts.
 */
import assert from "node:assert/strict";
import { DocumentExtraction, type PoolOptions } from "../../src/documents/mod.ts";
import { type FetchDeps, fetchPage, PRODUCTION_FETCH } from "../../src/web/fetch_service.ts";
import {
  pdf,
  pdfBomb,
  type PdfBombSpelling,
  pdfEncryptedBomb,
  xlsx,
  xlsxSharedStringBomb,
} from "../fixtures/files/build.ts";
import { type TestGateway, withGateway } from "../support/harness.ts";
import { upload } from "../support/uploads.ts";

const MiB = 1024 * 1024;

async function stillServing(t: TestGateway, key: string): Promise<void> {
  const models = await fetch(`${t.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
  assert.equal(models.status, 200);
  await models.body?.cancel();
  const ok = await upload(t, key, "after.pdf", await pdf(["Still here"]));
  assert.equal(ok.status, 200, JSON.stringify(ok.json));
}

const BYPASSES: PdfBombSpelling[] = ["hex-name", "bare-cr", "filter-chain", "indirect-filter"];

for (const spelling of BYPASSES) {
  Deno.test(`hostile PDF: a 768 MiB bomb with ${spelling} is refused 422 file_limit_exceeded`, () =>
    withGateway(async (t) => {
      const { key } = await t.newKey();
      const bomb = await pdfBomb(spelling);
      assert.ok(bomb.byteLength < 2 * MiB);
      const before = Deno.memoryUsage().rss;
      const r = await upload(t, key, `${spelling}.pdf`, bomb);
      const grew = Deno.memoryUsage().rss - before;
      assert.equal(r.status, 422, JSON.stringify(r.json));
      assert.equal(r.json.detail.error.code, "file_limit_exceeded");
      assert.match(r.json.detail.error.message, /бомба декомпрессии/);
      // The gateway's own process never inflates the stream (the old code grew by ~1.5 GiB here).
      assert.ok(grew < 256 * MiB, `gateway RSS grew by ${Math.round(grew / MiB)} MiB`);
      // Nothing was stored, and the gateway keeps serving.
      const list = await fetch(`${t.url}/v1/files`, { headers: { authorization: `Bearer ${key}` } });
      assert.deepEqual((await list.json()).data, []);
      await stillServing(t, key);
    }));
}

Deno.test("hostile PDF: an encrypted bomb (unreadable to the pre-pass) is stopped by the process memory limit → 422", () =>
  withGateway(async (t) => {
    const { key } = await t.newKey();
    const before = Deno.memoryUsage().rss;
    const r = await upload(t, key, "encrypted.pdf", await pdfEncryptedBomb());
    assert.equal(r.status, 422, JSON.stringify(r.json));
    assert.equal(r.json.detail.error.code, "file_limit_exceeded");
    assert.match(r.json.detail.error.message, /МиБ памяти/);
    assert.ok(Deno.memoryUsage().rss - before < 256 * MiB);
    await stillServing(t, key);
  }));

Deno.test("hostile XLSX: 10 rows × 20,000 cells of one 32,768-character shared string → 422 file_limit_exceeded", () =>
  withGateway(async (t) => {
    const { key } = await t.newKey();
    const r = await upload(t, key, "cells.xlsx", await xlsxSharedStringBomb());
    assert.equal(r.status, 422, JSON.stringify(r.json));
    assert.equal(r.json.detail.error.code, "file_limit_exceeded");
    assert.match(r.json.detail.error.message, /Извлечённый текст документа слишком велик/);
    // A workbook just under the bound (one row of 500 such cells, ~16.4 M characters) still extracts.
    const big = await upload(t, key, "ok.xlsx", await xlsxSharedStringBomb(1, 500));
    assert.equal(big.status, 200, JSON.stringify(big.json));
    await stillServing(t, key);
  }));

/** The gateway's own extraction (app.documents), to give it other pool options in a test. */
const extraction = (t: TestGateway) => t.gw.app.documents as DocumentExtraction;

Deno.test("extraction limits over HTTP: a document past the time or memory limit → 422, the next one is served", async () => {
  for (
    const [env, opts, pattern] of [
      // The time limit through its environment variable, as an operator sets it.
      [{ FILES_EXTRACT_TIMEOUT_MS: "50" }, undefined, /длилось дольше 50 мс/],
      [{}, { memoryBytes: 32 * MiB }, /больше 32 МиБ памяти/],
    ] as const
  ) {
    await withGateway(async (t) => {
      if (opts) extraction(t).configure(opts as PoolOptions); // after the gateway configured its own
      const { key } = await t.newKey();
      const r = await upload(t, key, "big.pdf", await pdf(Array.from({ length: 200 }, (_, i) => `p${i}`)));
      assert.equal(r.status, 422, JSON.stringify(r.json));
      assert.equal(r.json.detail.error.code, "file_limit_exceeded");
      assert.match(r.json.detail.error.message, pattern);
      extraction(t).configure({});
      await stillServing(t, key);
    }, env);
  }
});

Deno.test("extraction queue: past the running and waiting bound → 429 service_capacity_saturated at once", async () => {
  await withGateway(async (t) => {
    extraction(t).configure({ workers: 1, queue: 1 });
    const { key } = await t.newKey();
    const doc = await xlsx([{ name: "s", rows: Array.from({ length: 2000 }, (_, i) => [`row ${i}`, i]) }]);
    const results = await Promise.all(
      Array.from({ length: 4 }, (_, i) => upload(t, key, `q${i}.xlsx`, doc)),
    );
    const refused = results.filter((r) => r.status === 429);
    assert.ok(refused.length >= 1, JSON.stringify(results.map((r) => r.status)));
    for (const r of refused) assert.equal(r.json.detail.error.code, "service_capacity_saturated");
    assert.ok(results.filter((r) => r.status === 200).length >= 2);
    assert.deepEqual(extraction(t).pool.load, { running: 0, queued: 0 });
  });
});

Deno.test("fetch: a PDF bomb in any spelling is refused (415, decompression limit) without inflating it", async () => {
  const bombs = new Map<string, Uint8Array>();
  for (const s of BYPASSES) bombs.set(s, await pdfBomb(s));
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const bytes = bombs.get(new URL(req.url).pathname.slice(1));
    return bytes
      ? new Response(bytes as Uint8Array<ArrayBuffer>, { headers: { "content-type": "application/pdf" } })
      : new Response("no", { status: 404 });
  });
  const port = (server.addr as Deno.NetAddr).port;
  const documents = new DocumentExtraction();
  const deps: FetchDeps = {
    ...PRODUCTION_FETCH,
    resolver: (_name, type) => Promise.resolve(type === "A" ? ["127.0.0.1"] : []),
    policy: (ip) => ip === "127.0.0.1",
    ports: new Set([port]),
    documents,
  };
  try {
    for (const s of BYPASSES) {
      const before = Deno.memoryUsage().rss;
      const err = await fetchPage(`http://pages.example.com:${port}/${s}`, deps).then(
        (r) => assert.fail(`${s}: extracted ${r.content.length} characters`),
        (e) => e,
      );
      assert.equal(`${err.status} ${err.code}`, "415 managed_service_unsupported_content", s);
      assert.match(err.detail, /бомба декомпрессии/, s);
      assert.ok(Deno.memoryUsage().rss - before < 256 * MiB, s);
    }
  } finally {
    await documents.close();
    await server.shutdown();
  }
});

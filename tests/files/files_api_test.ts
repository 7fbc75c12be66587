/** /v1/files against a real gateway (§2.2, §3.1, §4.3, §7.4, §8.2) and translation into requests (§2.3, §4.2). */
import assert from "node:assert/strict";
import OpenAI from "openai";
import { ANTHROPIC_HEADERS, post, type TestGateway, withGateway } from "../support/harness.ts";
import { docx, pdf, pptx, xlsx } from "../fixtures/files/build.ts";

const enc = (s: string) => new TextEncoder().encode(s);

function form(
  parts: [string, string | { name: string; bytes: Uint8Array }][],
): FormData {
  const fd = new FormData();
  for (const [name, v] of parts) {
    if (typeof v === "string") fd.append(name, v);
    else fd.append(name, new File([v.bytes as Uint8Array<ArrayBuffer>], v.name));
  }
  return fd;
}

async function upload(t: TestGateway, key: string, name: string, bytes: Uint8Array, purpose?: string) {
  const fd = form([
    ["file", { name, bytes }],
    ...(purpose === undefined ? [] : [["purpose", purpose] as [string, string]]),
  ]);
  const res = await fetch(`${t.url}/v1/files`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}` },
    body: fd,
  });
  return { status: res.status, json: await res.json() };
}

function call(t: TestGateway, key: string, method: string, path: string) {
  return fetch(t.url + path, { method, headers: { authorization: `Bearer ${key}` } });
}

Deno.test("files: upload each format, list, get, content, delete", () =>
  withGateway(async (t) => {
    const { key } = await t.newKey();
    const inputs: [string, Uint8Array, string][] = [
      ["report.pdf", await pdf(["Page one"]), "application/pdf"],
      ["notes.txt", enc("hello"), "text/plain"],
      ["README.md", enc("# t"), "text/markdown"],
      ["data.json", enc('{"a":1}'), "application/json"],
      ["t.csv", enc("a,b\n1,2\n"), "text/csv"],
      [
        "w.docx",
        await docx([{ p: "x" }]),
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
      ],
      [
        "s.xlsx",
        await xlsx([{ name: "a", rows: [[1]] }]),
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
      ],
      [
        "p.pptx",
        await pptx([{ lines: ["s"] }]),
        "application/vnd.openxmlformats-officedocument.presentationml.presentation",
      ],
    ];
    const ids: string[] = [];
    for (const [name, bytes, type] of inputs) {
      const before = Math.floor(Date.now() / 1000);
      const { status, json } = await upload(t, key, name, bytes);
      assert.equal(status, 200, JSON.stringify(json));
      assert.deepEqual(Object.keys(json).sort(), [
        "bytes",
        "content_type",
        "created_at",
        "expires_at",
        "filename",
        "id",
        "object",
        "purpose",
      ]);
      assert.match(json.id, /^file_/);
      assert.equal(json.object, "file");
      assert.equal(json.bytes, bytes.byteLength);
      assert.equal(json.filename, name);
      assert.equal(json.purpose, "user_data");
      assert.equal(json.content_type, type);
      assert.ok(json.created_at >= before && json.created_at <= before + 2);
      assert.equal(json.expires_at, json.created_at + 86400);
      ids.push(json.id);
    }
    const list = await (await call(t, key, "GET", "/v1/files")).json();
    assert.equal(list.object, "list");
    assert.deepEqual(list.data.map((f: any) => f.id), ids);

    const one = await call(t, key, "GET", `/v1/files/${ids[0]}`);
    assert.equal(one.status, 200);
    assert.deepEqual(await one.json(), list.data[0]);

    const content = await call(t, key, "GET", `/v1/files/${ids[1]}/content`);
    assert.equal(content.status, 200);
    assert.equal(content.headers.get("content-type"), "text/plain");
    assert.equal(
      content.headers.get("content-disposition"),
      `attachment; filename="notes.txt"; filename*=UTF-8''notes.txt`,
    );
    assert.equal(await content.text(), "hello");
    const pdfBytes = new Uint8Array(
      await (await call(t, key, "GET", `/v1/files/${ids[0]}/content`)).arrayBuffer(),
    );
    assert.deepEqual(pdfBytes, inputs[0]![1]);

    const del = await call(t, key, "DELETE", `/v1/files/${ids[0]}`);
    assert.equal(del.status, 200);
    assert.deepEqual(await del.json(), { id: ids[0], object: "file", deleted: true });
    for (const [m, p] of [["GET", ""], ["GET", "/content"], ["DELETE", ""]]) {
      const res = await call(t, key, m!, `/v1/files/${ids[0]}${p}`);
      assert.equal(res.status, 404);
      assert.equal((await res.json()).detail.error.code, "file_not_found");
    }
    assert.equal((await (await call(t, key, "GET", "/v1/files")).json()).data.length, inputs.length - 1);
  }));

Deno.test("files: purpose trimmed and checked, unicode filename safely encoded", () =>
  withGateway(async (t) => {
    const { key } = await t.newKey();
    const a = await upload(t, key, "Отчёт Q1 (100%).txt", enc("x"), "  assistants \n");
    assert.equal(a.status, 200, JSON.stringify(a.json));
    assert.equal(a.json.purpose, "assistants");
    assert.equal(a.json.filename, "Отчёт Q1 (100%).txt");
    const res = await call(t, key, "GET", `/v1/files/${a.json.id}/content`);
    assert.equal(
      res.headers.get("content-disposition"),
      `attachment; filename="_____ Q1 (100_).txt"; filename*=UTF-8''%D0%9E%D1%82%D1%87%D1%91%D1%82%20Q1%20%28100%25%29.txt`,
    );
    await res.body?.cancel();
    assert.equal((await upload(t, key, "a.txt", enc("x"), "file-extract")).json.purpose, "file-extract");
    const bad = await upload(t, key, "a.txt", enc("x"), "fine-tune");
    assert.equal(bad.status, 422);
    assert.equal(bad.json.detail.error.code, "validation_error");
    assert.equal(bad.json.detail.error.param, "purpose");
  }));

Deno.test("files: a key sees only its own files", () =>
  withGateway(async (t) => {
    const a = await t.newKey();
    const b = await t.newKey();
    const { json } = await upload(t, a.key, "a.txt", enc("secret"));
    for (const [m, p] of [["GET", ""], ["GET", "/content"], ["DELETE", ""]]) {
      const res = await call(t, b.key, m!, `/v1/files/${json.id}${p}`);
      assert.equal(res.status, 404);
      assert.equal((await res.json()).detail.error.code, "file_not_found");
    }
    assert.deepEqual((await (await call(t, b.key, "GET", "/v1/files")).json()).data, []);
    assert.equal((await call(t, a.key, "GET", `/v1/files/${json.id}`)).status, 200);
    // Referencing another key's file in a request is the same 404.
    const chat = await post(`${t.url}/v1/chat/completions`, b.key, {
      model: "k3",
      messages: [{ role: "user", content: [{ type: "input_file", file_id: json.id }] }],
    });
    assert.equal(chat.status, 404);
    const body = await chat.json();
    assert.equal(body.error.code, "file_not_found");
    assert.equal(body.error.param, "messages.0.content.0");
  }));

Deno.test("files: every call answers 402 at zero credit, DELETE included", () =>
  withGateway(async (t) => {
    const funded = await t.newKey();
    const { json } = await upload(t, funded.key, "a.txt", enc("x"));
    const k = await t.newKey("0");
    const up = await upload(t, k.key, "b.txt", enc("x"));
    assert.equal(up.status, 402);
    assert.equal(up.json.detail.error.code, "insufficient_credit");
    for (
      const [m, p] of [["GET", "/v1/files"], ["GET", `/v1/files/${json.id}`], [
        "GET",
        `/v1/files/${json.id}/content`,
      ], ["DELETE", `/v1/files/${json.id}`]]
    ) {
      const res = await call(t, k.key, m!, p!);
      assert.equal(res.status, 402, `${m} ${p}`);
      assert.equal((await res.json()).detail.error.code, "insufficient_credit");
    }
  }));

Deno.test("files: multipart shape, empty, extension and size", () =>
  withGateway(async (t) => {
    const { key } = await t.newKey();
    const send = async (body: BodyInit, headers: Record<string, string> = {}) => {
      const res = await fetch(`${t.url}/v1/files`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, ...headers },
        body,
      });
      return { status: res.status, error: (await res.json()).detail?.error };
    };
    const f = { name: "a.txt", bytes: enc("x") };
    const cases: [string, BodyInit, number, string][] = [
      [
        "second extra field",
        form([["file", f], ["purpose", "user_data"], ["other", "1"]]),
        400,
        "invalid_multipart",
      ],
      [
        "two purposes",
        form([["file", f], ["purpose", "user_data"], ["purpose", "assistants"]]),
        400,
        "invalid_multipart",
      ],
      ["wrong field name", form([["file", f], ["purpos", "user_data"]]), 400, "invalid_multipart"],
      ["no file", form([["purpose", "user_data"]]), 400, "invalid_multipart"],
      ["file twice", form([["file", f], ["file", f]]), 400, "invalid_multipart"],
      ["file as a plain field", form([["file", "text"]]), 400, "invalid_multipart"],
      ["not multipart", JSON.stringify({ file: "x" }), 400, "invalid_multipart"],
      ["empty file", form([["file", { name: "a.txt", bytes: new Uint8Array(0) }]]), 422, "file_empty"],
      ["bad extension", form([["file", { name: "a.exe", bytes: enc("x") }]]), 422, "file_type_unsupported"],
      ["no extension", form([["file", { name: "README", bytes: enc("x") }]]), 422, "file_type_unsupported"],
      [
        "over 10 MiB",
        form([["file", { name: "a.txt", bytes: new Uint8Array(10 * 1024 * 1024 + 1).fill(97) }]]),
        413,
        "file_too_large",
      ],
    ];
    for (const [name, body, status, code] of cases) {
      const r = await send(body, name === "not multipart" ? { "content-type": "application/json" } : {});
      assert.equal(r.status, status, name);
      assert.equal(r.error.code, code, name);
    }
    // Exactly 10 MiB is accepted; uppercase extensions too.
    const ok = await upload(t, key, "BIG.TXT", new Uint8Array(10 * 1024 * 1024).fill(97));
    assert.equal(ok.status, 200, JSON.stringify(ok.json));
    // A chunked body (no Content-Length) over the bound is refused once 10 MiB + 64 KiB were counted.
    let sentChunks = 0;
    const huge = new ReadableStream<Uint8Array>({
      pull(c) {
        if (++sentChunks > 12) c.close();
        else c.enqueue(new Uint8Array(1024 * 1024));
      },
    });
    const r = await send(huge, { "content-type": "multipart/form-data; boundary=x" });
    assert.equal(r.status, 413);
    assert.equal(r.error.code, "file_too_large");
    // A hostile document is refused with its code and nothing is stored.
    const bad = await upload(t, key, "x.docx", await pdf(["not a docx"]));
    assert.equal(bad.status, 422);
    assert.equal(bad.json.detail.error.code, "file_unreadable");
    assert.equal((await (await call(t, key, "GET", "/v1/files")).json()).data.length, 1);
  }));

Deno.test("files: quota of 20 files holds under parallel uploads; byte quota on the stored record", () =>
  withGateway(async (t) => {
    const { key } = await t.newKey();
    const results = await Promise.all(
      Array.from({ length: 26 }, (_, i) => upload(t, key, `f${i}.txt`, enc(`file ${i}`))),
    );
    assert.equal(results.filter((r) => r.status === 200).length, 20);
    for (const r of results.filter((r) => r.status !== 200)) {
      assert.equal(r.status, 422);
      assert.equal(r.json.detail.error.code, "file_quota_exceeded");
    }
    assert.equal((await (await call(t, key, "GET", "/v1/files")).json()).data.length, 20);
    // Deleting one frees one slot.
    const first = results.find((r) => r.status === 200)!.json.id;
    assert.equal((await call(t, key, "DELETE", `/v1/files/${first}`)).status, 200);
    assert.equal((await upload(t, key, "again.txt", enc("x"))).status, 200);
    assert.equal((await upload(t, key, "over.txt", enc("x"))).status, 422);

    // Bytes: a 4 MiB text is stored as ~8 MiB (file + extracted sections): 6 fit in 50 MiB, not 7.
    const other = await t.newKey();
    const text = enc("line of text\n".repeat(4 * 1024 * 1024 / 13));
    const big = await Promise.all(
      Array.from({ length: 8 }, (_, i) => upload(t, other.key, `b${i}.txt`, text)),
    );
    assert.equal(big.filter((r) => r.status === 200).length, 6);
    assert.ok(
      big.filter((r) => r.status !== 200).every((r) => r.json.detail.error.code === "file_quota_exceeded"),
    );
  }));

Deno.test("files: expire after FILES_TTL_MS even before any sweep", () =>
  withGateway(async (t) => {
    const { key } = await t.newKey();
    const { json } = await upload(t, key, "a.txt", enc("short-lived"));
    assert.equal(json.expires_at, json.created_at + 1);
    assert.equal((await call(t, key, "GET", `/v1/files/${json.id}`)).status, 200);
    await new Promise((r) => setTimeout(r, 1100));
    for (const [m, p] of [["GET", ""], ["GET", "/content"], ["DELETE", ""]]) {
      const res = await call(t, key, m!, `/v1/files/${json.id}${p}`);
      assert.equal(res.status, 404);
      assert.equal((await res.json()).detail.error.code, "file_not_found");
    }
    assert.deepEqual((await (await call(t, key, "GET", "/v1/files")).json()).data, []);
    const chat = await post(`${t.url}/v1/chat/completions`, key, {
      model: "k3",
      messages: [{ role: "user", content: [{ type: "input_file", file_id: json.id }] }],
    });
    assert.equal(chat.status, 404);
    assert.equal((await chat.json()).error.code, "file_not_found");
    // Expired files no longer count against the quota.
    const many = await Promise.all(
      Array.from({ length: 20 }, (_, i) => upload(t, key, `n${i}.txt`, enc("x"))),
    );
    assert.ok(many.every((r) => r.status === 200));
  }, { FILES_TTL_MS: "1000" }));

function translated(block: any) {
  assert.equal(block.type, "text");
  const doc = JSON.parse(block.text).relay_translated_document;
  assert.ok(doc, "relay_translated_document");
  return doc;
}

Deno.test("translation: each format reaches the upstream as a translated block at the same position (openai SDK)", () =>
  withGateway(async (t) => {
    const { key } = await t.newKey();
    const client = new OpenAI({ apiKey: key, baseURL: `${t.url}/v1`, maxRetries: 0 });
    const cases: [string, Uint8Array, string[], string][] = [
      ["r.pdf", await pdf(["First page", "Second page"]), ["page=1", "page=2"], "Second page"],
      ["w.docx", await docx([{ h: "H1" }, { p: "body" }, { h: "H2" }, { p: "more" }]), [
        "section=1",
        "section=2",
      ], "H2\nmore"],
      ["p.pptx", await pptx([{ lines: ["Slide A"] }, { lines: ["Slide B"], notes: "N" }]), [
        "slide=1",
        "slide=2",
      ], "Slide A"],
      ["s.xlsx", await xlsx([{ name: "one", rows: [["a", 1]] }, { name: "two", rows: [["b"]] }]), [
        "sheet=1&part=1",
        "sheet=2&part=1",
      ], "Лист 2: two\nb\n"],
      ["n.txt", enc("plain text"), ["section=1"], "plain text"],
      ["n.md", enc("# md"), ["section=1"], "# md"],
      ["n.json", enc('{"k":"v"}'), ["section=1"], '{"k":"v"}'],
      ["n.csv", enc("a,b\n"), ["section=1"], "a,b\n"],
    ];
    for (const [name, bytes, anchors, someText] of cases) {
      const file = await client.files.create({
        file: new File([bytes as Uint8Array<ArrayBuffer>], name),
        purpose: "user_data",
      });
      const res = await client.chat.completions.create({
        model: "k3",
        max_tokens: 50,
        messages: [{
          role: "user",
          content: [
            { type: "text", text: "Что в документе?" },
            { type: "input_file", file_id: file.id } as any,
            {
              type: "text",
              text: "после",
            },
          ],
        }],
      });
      assert.ok(res.choices[0]);
      const sent = t.sim.requests.at(-1)!.body as any;
      const content = sent.messages[0].content;
      assert.equal(content.length, 3);
      assert.deepEqual(content[0], { type: "text", text: "Что в документе?" });
      assert.deepEqual(content[2], { type: "text", text: "после" });
      const doc = translated(content[1]);
      assert.equal(doc.file_id, file.id);
      assert.equal(doc.filename, name);
      assert.ok(typeof doc.content_type === "string" && doc.content_type !== "");
      assert.match(doc.notice, /данные пользователя/);
      assert.deepEqual(doc.sections.map((s: any) => s.anchor), anchors.map((a) => `${file.id}#${a}`), name);
      assert.ok(
        doc.sections.some((s: any) => s.text === someText),
        `${name}: ${JSON.stringify(doc.sections)}`,
      );
    }
  }));

Deno.test("translation: Responses and Messages surfaces, limits, non-user blocks, untouched requests", () =>
  withGateway(async (t) => {
    const { key } = await t.newKey();
    const { json: file } = await upload(t, key, "a.txt", enc("doc text"));
    const r1 = await post(`${t.url}/v1/responses`, key, {
      model: "k3",
      max_output_tokens: 50,
      input: [{
        role: "user",
        content: [{ type: "input_text", text: "q" }, { type: "input_file", file_id: file.id }],
      }],
    });
    assert.equal(r1.status, 200, await r1.clone().text());
    await r1.body?.cancel();
    let sent = t.sim.requests.at(-1)!.body as any;
    let user = sent.messages.find((m: any) => m.role === "user");
    assert.equal(translated(user.content[1]).sections[0].text, "doc text");

    for (
      const block of [{ type: "input_file", file_id: file.id }, {
        type: "document",
        source: { type: "file", file_id: file.id },
      }]
    ) {
      const r2 = await post(`${t.url}/v1/messages`, key, {
        model: "k3",
        max_tokens: 50,
        messages: [{ role: "user", content: [block, { type: "text", text: "q" }] }],
      }, ANTHROPIC_HEADERS);
      assert.equal(r2.status, 200, await r2.clone().text());
      await r2.body?.cancel();
      sent = t.sim.requests.at(-1)!.body as any;
      user = sent.messages.find((m: any) => m.role === "user");
      const first = Array.isArray(user.content) ? user.content[0] : { type: "text", text: user.content };
      assert.equal(translated(first).file_id, file.id);
    }

    // More than 20 references.
    const many = Array.from({ length: 21 }, () => ({ type: "input_file", file_id: file.id }));
    const r3 = await post(`${t.url}/v1/chat/completions`, key, {
      model: "k3",
      messages: [{ role: "user", content: many }],
    });
    assert.equal(r3.status, 400);
    assert.equal((await r3.json()).error.code, "file_references_exceeded");
    // Exactly 20 is fine.
    const r4 = await post(`${t.url}/v1/chat/completions`, key, {
      model: "k3",
      max_tokens: 20,
      messages: [{ role: "user", content: many.slice(1) }],
    });
    assert.equal(r4.status, 200);
    await r4.body?.cancel();

    // input_file outside a user message is not translated (the surface refuses it).
    const r5 = await post(`${t.url}/v1/chat/completions`, key, {
      model: "k3",
      messages: [{ role: "user", content: "hi" }, {
        role: "assistant",
        content: [{ type: "input_file", file_id: file.id }],
      }],
    });
    assert.equal(r5.status, 400);
    await r5.body?.cancel();

    // The 2 MiB bound counts escaping: 1.2 MiB of quotes is 2.4 MiB once escaped.
    const { json: quotes } = await upload(t, key, "q.txt", enc('"'.repeat(1.2 * 1024 * 1024)));
    const r6 = await post(`${t.url}/v1/chat/completions`, key, {
      model: "k3",
      messages: [{ role: "user", content: [{ type: "input_file", file_id: quotes.id }] }],
    });
    assert.equal(r6.status, 413);
    const e6 = (await r6.json()).error;
    assert.equal(e6.code, "file_block_too_large");
    assert.equal(e6.param, "messages.0.content.0");

    // A request without input_file never touches the file store.
    const store = t.gw.app.store as any;
    const touched: string[] = [];
    for (const m of ["getFile", "getFileSections", "listFiles", "getFileData"]) {
      const orig = store[m].bind(store);
      store[m] = (...a: unknown[]) => (touched.push(m), orig(...a));
    }
    const body = {
      model: "k3",
      max_tokens: 20,
      messages: [{ role: "user", content: [{ type: "text", text: "no files" }] }],
    };
    const r7 = await post(`${t.url}/v1/chat/completions`, key, body);
    assert.equal(r7.status, 200);
    await r7.body?.cancel();
    assert.deepEqual(touched, []);
    assert.deepEqual((t.sim.requests.at(-1)!.body as any).messages, body.messages);
  }));

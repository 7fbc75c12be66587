/**
 * File ids of a shape the gateway never issues (spec §4.3, §7.4): over-long, wrong length, wrong alphabet or
 * with a NUL are 404 file_not_found on every files route and in a generation request, never a 500 (a
 * 3,000-character id once overflowed the KV key).
 */
import assert from "node:assert/strict";
import { post, withGateway } from "../support/harness.ts";
import { assertEnvelope } from "../support/raw_http.ts";

Deno.test("an over-long or malformed file id is 404 file_not_found on GET, /content, DELETE and in a request body", () =>
  withGateway(async (t) => {
    const { key } = await t.newKey("1.00");
    const auth = { authorization: `Bearer ${key}` };
    const ids = [
      "file_" + "a".repeat(3000),
      "file_" + "0".repeat(3000),
      "file_" + "0".repeat(25),
      "file_" + "A".repeat(24),
      "file_%00" + "0".repeat(22),
      "x".repeat(2000),
    ];
    for (const id of ids) {
      for (
        const [method, path] of [
          ["GET", `/v1/files/${id}`],
          ["GET", `/v1/files/${id}/content`],
          ["DELETE", `/v1/files/${id}`],
        ] as const
      ) {
        const res = await fetch(t.url + path, { method, headers: auth });
        const body = await res.text();
        assertEnvelope(
          { status: res.status, headers: res.headers, body },
          404,
          "file_not_found",
          "detail",
          "file_id",
        );
      }
    }
    // The same ids referenced from a generation body: 404 file_not_found, never a 500.
    for (const id of ids) {
      const res = await post(t.url + "/v1/chat/completions", key, {
        model: "k3",
        messages: [{
          role: "user",
          content: [{ type: "text", text: "x" }, { type: "input_file", file_id: id }],
        }],
      });
      const body = await res.json();
      assert.equal(res.status, 404, `${id.slice(0, 20)}: ${JSON.stringify(body)}`);
      assert.equal(body.error.code, "file_not_found");
    }
    // A real id still works after all that.
    const form = new FormData();
    form.append("file", new File(["hello"], "a.txt", { type: "text/plain" }));
    const up = await fetch(t.url + "/v1/files", { method: "POST", headers: auth, body: form });
    const file = await up.json();
    assert.equal(up.status, 200, JSON.stringify(file));
    assert.match(file.id, /^file_[0-9a-f]{24}$/);
    const got = await fetch(t.url + `/v1/files/${file.id}`, { headers: auth });
    assert.equal(got.status, 200);
    await got.body?.cancel();
  }));

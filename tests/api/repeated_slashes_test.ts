/**
 * Repeated slashes in a path read as one, on every route (src/http/router.ts mergeSlashes): a base URL set with
 * a trailing slash makes clients send `/v1//chat/completions`, and nginx merges slashes by default while the
 * gateway behind it, or alone, must answer the same. The usage row records the merged path.
 */
import assert from "node:assert/strict";
import { mergeSlashes } from "../../src/http/router.ts";
import { ANTHROPIC_HEADERS, post, type TestGateway, withGateway } from "../support/harness.ts";

const ask = (model: string) => ({
  model,
  max_tokens: 64,
  messages: [{ role: "user", content: "привет [[sim:words=3]]" }],
});

async function get(t: TestGateway, key: string, path: string) {
  const res = await fetch(t.url + path, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, json: await res.json() as any };
}

Deno.test("mergeSlashes reads every run of slashes as one and leaves the rest of the path alone", () => {
  assert.equal(mergeSlashes("/v1/models"), "/v1/models");
  assert.equal(mergeSlashes("/v1//models"), "/v1/models");
  assert.equal(mergeSlashes("//v1///chat//completions"), "/v1/chat/completions");
  assert.equal(mergeSlashes("/v1/files//file_a%2F%2Fb/"), "/v1/files/file_a%2F%2Fb/");
  assert.equal(mergeSlashes("/"), "/");
  assert.equal(mergeSlashes("//"), "/");
});

Deno.test("repeated slashes: every generation surface, count_tokens, the theta prefix, models and usage answer", () =>
  withGateway(async (t) => {
    const { key } = await t.newKey("5.00");
    const models = await get(t, key, "/v1//models");
    assert.equal(models.status, 200, JSON.stringify(models.json));
    assert.deepEqual(models.json, (await get(t, key, "/v1/models")).json);

    const calls: [string, string, Record<string, string>][] = [
      ["/v1//chat/completions", "k3", {}],
      ["//v1/chat//completions", "k3", {}],
      ["/v1///responses", "k3", {}],
      ["/v1//messages", "beta-haiku-4-5", { ...ANTHROPIC_HEADERS, "x-api-key": key }],
      ["/theta//v1/chat/completions", "theta3.7-plus", {}],
    ];
    for (const [path, model, headers] of calls) {
      const body = path.includes("responses")
        ? { model, max_output_tokens: 64, input: "привет [[sim:words=3]]" }
        : ask(model);
      const res = await post(t.url + path, headers["x-api-key"] ? null : key, body, headers);
      assert.equal(res.status, 200, `${path}: ${await res.clone().text()}`);
      await res.text();
    }
    const count = await post(t.url + "/v1/messages//count_tokens", null, ask("beta-haiku-4-5"), {
      ...ANTHROPIC_HEADERS,
      "x-api-key": key,
    });
    assert.equal(count.status, 200, await count.clone().text());
    assert.equal(typeof (await count.json()).input_tokens, "number");

    // The usage rows carry the merged paths, so the report's endpoint filter finds them.
    const rows = await get(t, key, "/v1//usage/requests?limit=100");
    assert.equal(rows.status, 200, JSON.stringify(rows.json));
    assert.deepEqual(
      (rows.json.data as any[]).map((r) => r.endpoint).sort(),
      [
        "/theta/v1/chat/completions",
        "/v1/chat/completions",
        "/v1/chat/completions",
        "/v1/messages",
        "/v1/responses",
      ],
    );
    const files = await get(t, key, "/v1//files");
    assert.equal(files.status, 200, JSON.stringify(files.json));
    assert.equal(files.json.object, "list");
    const missing = await get(t, key, "/v1/files//file_nope");
    assert.equal(missing.status, 404);
    assert.equal(missing.json.detail.error.code, "file_not_found");
  }));

Deno.test("repeated slashes: an unknown path is still 404 route_not_found, a wrong method still 405", () =>
  withGateway(async (t) => {
    const { key } = await t.newKey("1.00");
    const nothing = await get(t, key, "/v1//nothing");
    assert.equal(nothing.status, 404);
    assert.equal(nothing.json.error.code, "route_not_found");
    const wrong = await get(t, key, "/v1//chat/completions");
    assert.equal(wrong.status, 405);
    assert.equal(wrong.json.error.code, "method_not_allowed");
  }));

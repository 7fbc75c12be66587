/**
 * A native request goes upstream as the client's own bytes, with only the members the gateway sets put into
 * them in place (src/engine/generate.ts `nativeBody`): a streamed Chat request's `stream_options`, gamma/eta's
 * upstream model and reasoning effort. Its conversation is never re-serialised: escapes, spacing and member
 * order arrive as the client wrote them. An upstream in front of the simulator records the bytes it got.
 */
import assert from "node:assert/strict";
import { withGateway } from "../support/harness.ts";
import { readFrames } from "../support/sse_client.ts";
import { fixedUpstream } from "../support/upstream_stubs.ts";

const MESSAGES = `[ {"role" : "user", "content" : "caf\\u00e9 \\"[[sim:words=3]]\\"\\n\\/"} ]`;

/**
 * A test gateway whose `upstreamVar` family goes through an upstream that records each request's body text and
 * passes the request on to the simulator; `send` posts raw text with a fresh key.
 */
async function withRecordingUpstream(
  upstreamVar: string,
  fn: (send: (path: string, text: string) => Promise<Response>, bodies: string[]) => Promise<void>,
): Promise<void> {
  const bodies: string[] = [];
  let simulator = "";
  const up = fixedUpstream(async (req) => {
    const text = await req.text();
    bodies.push(text);
    return await fetch(simulator + new URL(req.url).pathname, {
      method: "POST",
      headers: req.headers,
      body: text,
    });
  });
  try {
    await withGateway(async (t) => {
      simulator = t.sim.url;
      const { key } = await t.newKey("5.00");
      const send = (path: string, text: string) =>
        fetch(t.url + path, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: text,
        });
      await fn(send, bodies);
    }, { [upstreamVar]: up.url });
  } finally {
    await up.close();
  }
}

Deno.test("native Chat stream: the upstream gets the client's bytes with stream_options put in", () =>
  withRecordingUpstream("ALPHA_UPSTREAM_URL", async (send, bodies) => {
    const client = `{ "model":"k3",  "stream" : true, "messages" : ${MESSAGES} }`;
    const res = await send("/v1/chat/completions", client);
    assert.equal(res.status, 200);
    assert.ok((await readFrames(res)).raw.includes("data: [DONE]"));
    assert.equal(bodies.length, 1);
    assert.equal(
      bodies[0],
      `{"stream_options":{"include_usage":true}, "model":"k3",  "stream" : true, "messages" : ${MESSAGES} }`,
    );
    // A client's own stream_options is set in place, its other bytes kept.
    const asked =
      `{"model":"k3","stream_options" : {"include_usage":false},"stream":true,"messages":${MESSAGES}}`;
    assert.equal((await send("/v1/chat/completions", asked)).status, 200);
    assert.equal(
      bodies[1],
      `{"model":"k3","stream_options" : {"include_usage":true},"stream":true,"messages":${MESSAGES}}`,
    );
    // Without a stream nothing changes: the bytes as they came.
    const plain = `{"model":"k3","messages":${MESSAGES}}`;
    assert.equal((await send("/v1/chat/completions", plain)).status, 200);
    assert.equal(bodies[2], plain);
  }));

Deno.test("native Responses for eta: the upstream model and effort are set in place, the input kept", () =>
  withRecordingUpstream("DELTA_UPSTREAM_URL", async (send, bodies) => {
    const input = `[{"role":"user","content":"caf\\u00e9 [[sim:words=3]]"}]`;
    const res = await send("/v1/responses", `{"model": "delta-eta-4.6-high", "input" : ${input}}`);
    assert.equal(res.status, 200);
    assert.equal((await res.json()).model, "delta-eta-4.6-high");
    assert.equal(bodies[0], `{"reasoning":{"effort":"high"},"model": "eta-4.6", "input" : ${input}}`);
  }));

Deno.test("a duplicated member the gateway sets: the body is serialised again, one member each", () =>
  withRecordingUpstream("ALPHA_UPSTREAM_URL", async (send, bodies) => {
    const client =
      `{"model":"k3","stream":true,"stream_options":{},"stream_options":{},"messages":${MESSAGES}}`;
    const res = await send("/v1/chat/completions", client);
    assert.equal(res.status, 200);
    await readFrames(res);
    assert.deepEqual(JSON.parse(bodies[0]!), {
      model: "k3",
      stream: true,
      stream_options: { include_usage: true },
      messages: JSON.parse(MESSAGES),
    });
    assert.equal(bodies[0]!.match(/stream_options/g)?.length, 1);
  }));

Deno.test("a name the client's bytes repeat, at any depth: the upstream gets the body the gateway held for", () =>
  withRecordingUpstream("ALPHA_UPSTREAM_URL", async (send, bodies) => {
    // JSON.parse keeps the last of each: max_tokens 16 and the short content are what was checked and held for.
    const client =
      `{"model":"k3","max_tokens":50000,"messages":[{"role":"user","content":"[[sim:words=3]]",` +
      `"content":"коротко [[sim:words=2]]"}],"max_tokens":16}`;
    const res = await send("/v1/chat/completions", client);
    assert.equal(res.status, 200);
    await res.json();
    assert.deepEqual(JSON.parse(bodies[0]!), {
      model: "k3",
      max_tokens: 16,
      messages: [{ role: "user", content: "коротко [[sim:words=2]]" }],
    });
    assert.equal(bodies[0]!.match(/max_tokens/g)?.length, 1);
    assert.equal(bodies[0]!.match(/"content"/g)?.length, 1);
    // A name written twice in one object only through an escape is a repeat too.
    const escaped = `{"model":"k3","max_tokens":50000,"max_\\u0074okens":16,"messages":${MESSAGES}}`;
    assert.equal((await send("/v1/chat/completions", escaped)).status, 200);
    assert.equal(JSON.parse(bodies[1]!).max_tokens, 16);
    assert.equal(bodies[1]!.match(/max_/g)?.length, 1);
    // The same names in different objects are no repeat: the bytes go as they came.
    const distinct =
      `{"model":"k3","messages":[{"role":"user","content":"a"},{"role":"user","content":"b"}]}`;
    assert.equal((await send("/v1/chat/completions", distinct)).status, 200);
    assert.equal(bodies[2], distinct);
  }));

Deno.test("a name written with an escape: the upstream gets the body as the gateway read it", () =>
  withRecordingUpstream("ALPHA_UPSTREAM_URL", async (send, bodies) => {
    // Deno 2.9's JSON.parse (V8 15.0), once it has read an object whose next name ends in a backslash, reads a
    // name written with an escape in that place of a later object with the same names before it, and as long,
    // as that name too (docs/api.md "Request bodies on the native path"). The gateway parses in this process,
    // so this process's JSON.parse reads a body as the gateway does.
    const primers = [
      `{"model":"k3","\\\\":1,"messages":${MESSAGES}}`,
      `{"model":"k3","messages":[{"role":"user","content":"[[sim:words=3]]","conten\\\\":"b"}]}`,
    ];
    for (const primer of primers) assert.equal((await send("/v1/chat/completions", primer)).status, 200);
    const clients = [
      // At the top level, and where a message's `content` written again would reach the upstream unseen.
      `{"model":"k3","\\u0041":1,"messages":${MESSAGES}}`,
      `{"model":"k3","messages":[{"role":"user","content":"[[sim:words=3]]","conten\\u0074":"${
        "длинный текст ".repeat(50)
      }"}]}`,
    ];
    for (const client of clients) {
      assert.equal((await send("/v1/chat/completions", client)).status, 200);
      assert.equal(
        bodies.at(-1),
        JSON.stringify(JSON.parse(client)),
        "serialised from what the gateway read",
      );
    }
    assert.equal(bodies.length, 4);
  }));

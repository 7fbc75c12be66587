/**
 * A native request goes upstream as the client's own bytes, with only the members the gateway sets put into
 * them in place (src/engine/generate.ts `nativeBody`): a streamed Chat request's `stream_options`, gamma/eta's
 * upstream model and reasoning effort. Its conversation is never re-serialised: escapes, spacing and member
 * order arrive as the client wrote them. An upstream in front of the simulator records the bytes it got.
 */
import assert from "node:assert/strict";
import { withGateway } from "./harness.ts";
import { readFrames } from "./sse_client.ts";
import { fixedUpstream } from "./upstream_stubs.ts";

const MESSAGES = `[ {"role" : "user", "content" : "caf\\u00e9 \\"[[sim:words=3]]\\"\\n\\/"} ]`;

/** Records each request's body text and passes the request on to the simulator. */
function recordingUpstream() {
  const bodies: string[] = [];
  let target = "";
  const up = fixedUpstream(async (req) => {
    const text = await req.text();
    bodies.push(text);
    const url = new URL(req.url);
    return await fetch(target + url.pathname, { method: "POST", headers: req.headers, body: text });
  });
  return { ...up, bodies, to: (url: string) => (target = url) };
}

async function send(url: string, key: string, path: string, text: string): Promise<Response> {
  return await fetch(url + path, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: text,
  });
}

Deno.test("native Chat stream: the upstream gets the client's bytes with stream_options put in", async () => {
  const up = recordingUpstream();
  try {
    await withGateway(async (t) => {
      up.to(t.sim.url);
      const k = await t.newKey("5.00");
      const client = `{ "model":"k3",  "stream" : true, "messages" : ${MESSAGES} }`;
      const res = await send(t.url, k.key, "/v1/chat/completions", client);
      assert.equal(res.status, 200);
      const frames = await readFrames(res);
      assert.ok(frames.raw.includes("data: [DONE]"));
      assert.equal(up.bodies.length, 1);
      assert.equal(
        up.bodies[0],
        `{"stream_options":{"include_usage":true}, "model":"k3",  "stream" : true, "messages" : ${MESSAGES} }`,
      );
      // A client's own stream_options is set in place, its other bytes kept.
      const asked =
        `{"model":"k3","stream_options" : {"include_usage":false},"stream":true,"messages":${MESSAGES}}`;
      assert.equal((await send(t.url, k.key, "/v1/chat/completions", asked)).status, 200);
      assert.equal(
        up.bodies[1],
        `{"model":"k3","stream_options" : {"include_usage":true},"stream":true,"messages":${MESSAGES}}`,
      );
      // Without a stream nothing changes: the bytes as they came.
      const plain = `{"model":"k3","messages":${MESSAGES}}`;
      assert.equal((await send(t.url, k.key, "/v1/chat/completions", plain)).status, 200);
      assert.equal(up.bodies[2], plain);
    }, { ALPHA_UPSTREAM_URL: up.url });
  } finally {
    await up.close();
  }
});

Deno.test("native Responses for eta: the upstream model and effort are set in place, the input kept", async () => {
  const up = recordingUpstream();
  try {
    await withGateway(async (t) => {
      up.to(t.sim.url);
      const k = await t.newKey("5.00");
      const input = `[{"role":"user","content":"caf\\u00e9 [[sim:words=3]]"}]`;
      const client = `{"model": "delta-eta-4.6-high", "input" : ${input}}`;
      const res = await send(t.url, k.key, "/v1/responses", client);
      assert.equal(res.status, 200, await res.clone().text());
      assert.equal((await res.json()).model, "delta-eta-4.6-high");
      assert.equal(
        up.bodies[0],
        `{"reasoning":{"effort":"high"},"model": "eta-4.6", "input" : ${input}}`,
      );
    }, { DELTA_UPSTREAM_URL: up.url });
  } finally {
    await up.close();
  }
});

Deno.test("a duplicated member the gateway sets: the body is serialised again, one member each", async () => {
  const up = recordingUpstream();
  try {
    await withGateway(async (t) => {
      up.to(t.sim.url);
      const k = await t.newKey("5.00");
      const client =
        `{"model":"k3","stream":true,"stream_options":{},"stream_options":{},"messages":${MESSAGES}}`;
      const res = await send(t.url, k.key, "/v1/chat/completions", client);
      assert.equal(res.status, 200);
      await readFrames(res);
      assert.deepEqual(JSON.parse(up.bodies[0]!), {
        model: "k3",
        stream: true,
        stream_options: { include_usage: true },
        messages: JSON.parse(MESSAGES),
      });
      assert.equal(up.bodies[0]!.match(/stream_options/g)?.length, 1);
    }, { ALPHA_UPSTREAM_URL: up.url });
  } finally {
    await up.close();
  }
});

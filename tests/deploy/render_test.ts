/** deploy/render.ts: fills every placeholder, refuses a typo, a missing value and a multi-line value. */
import assert from "node:assert/strict";
import { placeholders, render } from "../../deploy/render.ts";

const TEMPLATE = "server_name {{SERVER_NAME}};\nproxy_pass http://{{UPSTREAM}};\nlisten {{SERVER_NAME}}x;\n";

Deno.test("render: every placeholder replaced, each name listed once in order", () => {
  assert.deepEqual(placeholders(TEMPLATE), ["SERVER_NAME", "UPSTREAM"]);
  assert.equal(
    render(TEMPLATE, { SERVER_NAME: "gw.example.com", UPSTREAM: "127.0.0.1:8787" }),
    "server_name gw.example.com;\nproxy_pass http://127.0.0.1:8787;\nlisten gw.example.comx;\n",
  );
});

Deno.test("render: refuses an unknown name, a placeholder left without a value, an empty or multi-line value", () => {
  const values = { SERVER_NAME: "gw.example.com", UPSTREAM: "127.0.0.1:8787" };
  assert.throws(() => render(TEMPLATE, { ...values, UPSTRAEM: "x" }), /no placeholder UPSTRAEM/);
  assert.throws(() => render(TEMPLATE, { SERVER_NAME: "gw.example.com" }), /no value for UPSTREAM/);
  assert.throws(() => render(TEMPLATE, { ...values, UPSTREAM: "" }), /UPSTREAM: the value must be one/);
  assert.throws(
    () => render(TEMPLATE, { ...values, SERVER_NAME: "a;\n}\nserver {" }),
    /SERVER_NAME: the value must be one/,
  );
});

Deno.test("render: the command line writes the rendered file, and fails with the reason", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/t.conf`, TEMPLATE);
    const script = new URL("../../deploy/render.ts", import.meta.url).pathname;
    const cli = (...args: string[]) =>
      new Deno.Command(Deno.execPath(), { args: ["run", "--allow-read", script, `${dir}/t.conf`, ...args] })
        .output();
    const ok = await cli("SERVER_NAME=gw.example.com", "UPSTREAM=127.0.0.1:8787");
    assert.equal(ok.code, 0, new TextDecoder().decode(ok.stderr));
    assert.equal(
      new TextDecoder().decode(ok.stdout),
      render(TEMPLATE, {
        SERVER_NAME: "gw.example.com",
        UPSTREAM: "127.0.0.1:8787",
      }),
    );
    const bad = await cli("SERVER_NAME=gw.example.com");
    assert.equal(bad.code, 1);
    assert.equal(new TextDecoder().decode(bad.stderr), "render: no value for UPSTREAM\n");
    assert.equal(bad.stdout.length, 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

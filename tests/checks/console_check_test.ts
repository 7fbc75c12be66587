/** The no-console check of `deno task check` (scripts/check_console.ts), run as a test too. */
import assert from "node:assert/strict";
import { runCheck } from "../support/run_check.ts";
import { ALLOWED } from "../../scripts/check_console.ts";

const run = (root?: string) => runCheck("check_console.ts", root);

/** A small tree: the HTTP layer and every allowed file print, the rest logs. */
async function plant(root: string, files: Record<string, string>): Promise<void> {
  const all: Record<string, string> = {
    ...Object.fromEntries(Object.keys(ALLOWED).map((path) => [path, 'console.error("allowed");\n'])),
    "main.ts": 'console.log("listening");\n',
    "src/http/serve.ts": 'console.error("accept failed");\n',
    "src/store/kv_store.ts":
      '// not console.warn: the Logger\nthis.log.warn("x", { url: "http://h/console" });\n',
    "src/store/kv_store_test.ts": 'console.log("a test may print");\n',
    "src/store/test_fixtures.ts": 'console.log("test support may print");\n',
    ...files,
  };
  for (const [path, text] of Object.entries(all)) {
    await Deno.mkdir(`${root}/${path.slice(0, path.lastIndexOf("/") + 1) || "."}`, { recursive: true });
    await Deno.writeTextFile(`${root}/${path}`, text);
  }
}

Deno.test("console check: no console in src/ below the HTTP layer but the allowed files", async () => {
  const r = await run();
  assert.equal(r.code, 0, r.text);
  assert.match(r.text, /none below the HTTP layer/);
});

Deno.test("console check: the HTTP layer, the allowed files, tests, test support and comments pass", async () => {
  const root = await Deno.makeTempDir();
  try {
    await plant(root, {});
    const r = await run(root);
    assert.equal(r.code, 0, r.text);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("console check: a console call below the HTTP layer is reported with its line", async () => {
  const root = await Deno.makeTempDir();
  try {
    await plant(root, {
      "src/accounts/key_refresh.ts":
        'export const a = 1;\n/* a comment */\nconsole.error("key refresh failed");\n',
      "src/util/print.ts": "const { warn } = console;\n",
    });
    const r = await run(root);
    assert.equal(r.code, 1, r.text);
    assert.match(r.text, /src\/accounts\/key_refresh\.ts:3: console\.error\("key refresh failed"\);/);
    assert.match(r.text, /src\/util\/print\.ts:1: const \{ warn \} = console;/);
    assert.doesNotMatch(r.text, /src\/(http|store)\//);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("console check: an allowed file that is gone or no longer prints is reported", async () => {
  const root = await Deno.makeTempDir();
  try {
    const [quiet, gone] = Object.keys(ALLOWED);
    await plant(root, { [quiet!]: "export const quiet = true;\n" });
    await Deno.remove(`${root}/${gone}`);
    const r = await run(root);
    assert.equal(r.code, 1, r.text);
    assert.ok(r.text.includes(`${quiet}: allowed, but no longer uses console`), r.text);
    assert.ok(r.text.includes(`${gone}: allowed, but there is no such file`), r.text);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

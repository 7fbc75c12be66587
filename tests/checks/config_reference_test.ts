/** The configuration reference: every setting described and in one area; docs/configuration.md current. */
import assert from "node:assert/strict";
import { CONFIG_AREAS, ConfigSchema } from "../../src/config/env.ts";
import { REFERENCE_PATH, renderConfigReference, settingDocs } from "../../scripts/config_reference.ts";

Deno.test("every setting has a description", () => {
  const undescribed = settingDocs().filter((d) => !d.description?.trim()).map((d) => d.name);
  assert.deepEqual(undescribed, [], "describe these in src/config/env.ts");
});

Deno.test("every setting of the schema sits in exactly one area", () => {
  const inAreas = CONFIG_AREAS.flatMap((a) => Object.keys(a.settings));
  assert.deepEqual([...inAreas].sort(), Object.keys(ConfigSchema.shape).sort());
  assert.equal(new Set(inAreas).size, inAreas.length, "a setting is listed in two areas");
});

Deno.test("the reference shows each setting's default and accepted values", () => {
  const port = settingDocs().find((d) => d.name === "PORT");
  assert.deepEqual(port && { defaultValue: port.defaultValue, accepts: port.accepts }, {
    defaultValue: 8787,
    accepts: "an integer from 0 to 65535",
  });
  const level = settingDocs().find((d) => d.name === "LOG_LEVEL");
  assert.equal(level?.accepts, "one of `debug`, `info`, `warn`, `error`");
});

Deno.test("docs/configuration.md is current (deno task config:docs)", async () => {
  const checkedIn = await Deno.readTextFile(REFERENCE_PATH);
  assert.ok(
    checkedIn === await renderConfigReference(),
    "docs/configuration.md is stale: run `deno task config:docs`",
  );
});

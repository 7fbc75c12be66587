import assert from "node:assert/strict";
import { parseWrk, wrkScript } from "./wrk.ts";

Deno.test("parseWrk: the done hook's figures and wrk's CPU from its shell's cutime + cstime", () => {
  const out = [
    "Running 2s test @ http://127.0.0.1:8080/v1/chat/completions",
    "  2 threads and 32 connections",
    'WRK_DONE {"requests":1000,"duration_us":2000000,"p50_us":250,"p99_us":1500,"max_us":9000,"errors":3}',
    "4242 (sh) S 1 4242 4242 0 -1 4194560 100 200 0 0 1 2 150 37 20 0 1 0 5000 2000000 100",
    "",
  ].join("\n");
  assert.deepEqual(parseWrk(out), {
    requests: 1000,
    seconds: 2,
    rps: 500,
    p50Ms: 0.25,
    p99Ms: 1.5,
    maxMs: 9,
    errors: 3,
    clientCpuMs: 1870,
  });
  assert.throws(() => parseWrk("Running 2s test\n"), /unexpected wrk output/);
});

Deno.test("wrkScript: the body verbatim in a long bracket it does not close, and the headers", () => {
  const lines = wrkScript({ authorization: "Bearer k" }, '{"content":"a ]=] b ]] c"}').split("\n");
  assert.equal(lines[1], 'wrk.body = [==[{"content":"a ]=] b ]] c"}]==]');
  assert.equal(lines[2], 'wrk.headers["authorization"] = "Bearer k"');
});

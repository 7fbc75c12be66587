/**
 * What sending a JSON answer in one write saves (src/util/one_write.ts, docs/performance.md "One write per
 * answer"): a minimal server answering the side by side's 340-byte completion behind the gateway's five header
 * fields (576 bytes with Content-Length: past Deno's 512-byte write buffer, two writes), with Content-Length
 * or chunked (one write), behind `Deno.serve` and behind the gateway's per-connection listener
 * (src/http/serve.ts). wrk at 32 connections, the variants alternated, a fresh server each; prints the rate and
 * the server's CPU per answer of every round.
 *
 * `deno run -A bench/answer_write.ts [ROUNDS]` (default 3; ANSWER_WRITE_SECONDS per run, default 5).
 * Started with `serve` as its argument, it is that server (ANSWER=length|chunked, SERVE=plain|deadlines, PORT).
 */
import { serveGateway } from "../src/http/serve.ts";
import { ONE_WRITE } from "../src/util/one_write.ts";
import { Logger } from "../src/util/log.ts";
import { withCpu } from "./cpu.ts";
import { freePort, waitReady } from "./procs.ts";
import { ensureWrk, runWrk, wrkScript } from "./wrk.ts";
import { COMPLETION } from "./chat_mock.ts";
import { GATEWAY_ANSWER_FIELDS } from "./scenarios.ts";

/** The gateway's answer head: its content type and its other fields. */
const FIELDS = { "content-type": "application/json", ...GATEWAY_ANSWER_FIELDS };

function serve(): void {
  const headers = Deno.env.get("ANSWER") === "chunked" ? { ...FIELDS, ...ONE_WRITE } : FIELDS;
  const handler = async (req: Request) => {
    await req.text();
    return new Response(COMPLETION, { headers });
  };
  const port = Number(Deno.env.get("PORT"));
  if (Deno.env.get("SERVE") === "deadlines") {
    serveGateway({ hostname: "127.0.0.1", port, log: new Logger("warn") }, handler);
  } else Deno.serve({ hostname: "127.0.0.1", port, onListen() {} }, handler);
}

async function measure(rounds: number, seconds: number): Promise<void> {
  const why = await ensureWrk(console.log);
  if (why) throw new Error(why);
  const script = await Deno.makeTempFile({ suffix: ".lua" });
  await Deno.writeTextFile(script, wrkScript({ "content-type": "application/json" }, '{"model":"k3"}'));
  for (let round = 1; round <= rounds; round++) {
    for (const serveMode of ["plain", "deadlines"]) {
      for (const answer of ["length", "chunked"]) {
        const port = freePort();
        const child = new Deno.Command(Deno.execPath(), {
          args: ["run", "--allow-net", "--allow-env", new URL(import.meta.url).pathname, "serve"],
          env: { ANSWER: answer, SERVE: serveMode, PORT: String(port) },
          stdout: "null",
        }).spawn();
        const url = `http://127.0.0.1:${port}/`;
        try {
          await waitReady(url);
          await runWrk({ script, url, connections: 32, threads: 2, seconds: 1 }); // warm-up
          const [w, cpu] = await withCpu(
            { server: child.pid },
            () => runWrk({ script, url, connections: 32, threads: 2, seconds }),
          );
          const us = cpu.byName.server! * w.seconds * 1e6 / w.requests;
          console.log(
            `round ${round} ${serveMode.padEnd(9)} ${answer.padEnd(7)}: ${Math.round(w.rps)} answers/s, ` +
              `${us.toFixed(1)} µs CPU each, errors ${w.errors}`,
          );
        } finally {
          child.kill("SIGKILL");
          await child.status;
        }
      }
    }
  }
  await Deno.remove(script);
}

if (import.meta.main) {
  if (Deno.args[0] === "serve") serve();
  else await measure(Number(Deno.args[0] ?? 3), Number(Deno.env.get("ANSWER_WRITE_SECONDS") ?? 5));
}

/**
 * `deno task soak` (not part of CI): the gateway under half its measured peak for SOAK_SECONDS
 * (default 600) with faults injected — upstream errors mid-stream, cut bodies, 5xx answers, clients that
 * leave mid-stream — across every family and surface. Reports memory over time, what is left open at the end
 * (holds, streams) and the ledger identity of every key. Loopback only: the simulator and the gateway are
 * subprocesses of this script.
 */
import { ADMIN_TOKEN, createKeyRecord, memoryOf, ROOT, startGatewayProc, startSim } from "./procs.ts";
import { SOAK_HEADING, withSection } from "./sections.ts";
import { parseUsd } from "../src/money/usd.ts";

const SECONDS = Number(Deno.env.get("SOAK_SECONDS") ?? 600);
const SAMPLE_MS = Number(Deno.env.get("SOAK_SAMPLE_MS") ?? 10_000);
/** In-flight requests beyond this are not started (the generator must not become the bottleneck's queue). */
const MAX_INFLIGHT = 256;
const KEYS = 8;

const ROUTES = [
  { path: "/v1/chat/completions", model: "k3", kind: "chat" },
  { path: "/v1/messages", model: "beta-haiku-4-5", kind: "messages" },
  { path: "/v1/responses", model: "gamma-2.5", kind: "responses" },
  { path: "/v1/chat/completions", model: "theta3.8-omni-flash", kind: "chat" },
  { path: "/v1/messages", model: "k3", kind: "messages" },
  { path: "/v1/responses", model: "delta-eta-4.6-low", kind: "responses" },
] as const;

/** Faults by share of requests; the rest are clean. `leave` is a client that disconnects mid-stream. */
const FAULTS: [string, number][] = [
  ["[[sim:fault=error_mid]]", 0.05],
  ["[[sim:fault=cut_mid]]", 0.05],
  ["[[sim:fault=status:500]]", 0.03],
  ["[[sim:fault=status:429]]", 0.02],
  ["leave", 0.05],
];

function pickFault(r: number): string {
  let acc = 0;
  for (const [fault, share] of FAULTS) if (r < (acc += share)) return fault;
  return "";
}

function body(kind: string, model: string, text: string, stream: boolean): string {
  if (kind === "responses") return JSON.stringify({ model, input: text, max_output_tokens: 200, stream });
  return JSON.stringify({ model, max_tokens: 200, stream, messages: [{ role: "user", content: text }] });
}

interface Tally {
  sent: number;
  ok: number;
  refused: number;
  failed: number;
  left: number;
  skipped: number;
  hung: number;
}

async function one(gw: string, key: string, i: number, tally: Tally): Promise<void> {
  const route = ROUTES[i % ROUTES.length]!;
  const stream = i % 3 !== 0;
  const fault = pickFault(Math.random());
  const leave = fault === "leave";
  const text = `Запрос ${i} [[sim:words=40]] [[sim:interval=2]] ${leave ? "" : fault}`;
  const abort = new AbortController();
  // A request that has not ended in 60 s is a hang (the gateway must never hang a stream): counted, not waited on.
  const hang = setTimeout(() => {
    tally.hung++;
    abort.abort();
  }, 60_000);
  tally.sent++;
  try {
    const res = await fetch(gw + route.path, {
      method: "POST",
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": "application/json",
        "anthropic-version": "2023-06-01",
      },
      body: body(route.kind, route.model, text, stream),
      signal: abort.signal,
    });
    if (res.status !== 200) {
      await res.body?.cancel();
      tally.refused++;
      return;
    }
    const reader = res.body!.getReader();
    let chunks = 0;
    for (;;) {
      const { done } = await reader.read();
      if (done) break;
      if (leave && stream && ++chunks === 3) {
        abort.abort();
        tally.left++;
        return;
      }
    }
    tally.ok++;
  } catch {
    if (abort.signal.aborted) return;
    tally.failed++;
  } finally {
    clearTimeout(hang);
  }
}

async function admin(gw: string, path: string): Promise<any> {
  const res = await fetch(gw + path, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  return await res.json();
}

const sim = await startSim();
// A KV file, as in production: an in-memory store would keep every usage row in RAM and read as a leak.
const dataDir = await Deno.makeTempDir({ prefix: "soak-" });
const gw = await startGatewayProc(sim.url, { env: { DATABASE_URL: "", DATA_DIR: dataDir } });
try {
  const records = await Promise.all(
    Array.from({ length: KEYS }, () => createKeyRecord(gw.url, "1000000.00")),
  );
  const keys = records.map((r) => r.key);
  // Peak: the soak's own mix (families, surfaces, faults) in closed loops, so half of it is sustainable.
  const peakTally: Tally = { sent: 0, ok: 0, refused: 0, failed: 0, left: 0, skipped: 0, hung: 0 };
  const peakEnd = performance.now() + 5_000;
  let n = 0;
  await Promise.all(Array.from({ length: 64 }, async () => {
    while (performance.now() < peakEnd) await one(gw.url, keys[n % KEYS]!, n++, peakTally);
  }));
  const peakRps = peakTally.sent / 5;
  const rate = Math.max(1, Math.floor(peakRps / 2));
  console.log(
    `peak ${peakRps.toFixed(0)} requests/s (the soak's mix; ${
      JSON.stringify(peakTally)
    }); soak at ${rate}/s for ${SECONDS} s`,
  );

  const tally: Tally = { sent: 0, ok: 0, refused: 0, failed: 0, left: 0, skipped: 0, hung: 0 };
  const inflight = new Set<Promise<void>>();
  const samples: { t: number; rssMiB: number; inflight: number; sent: number }[] = [];
  const start = performance.now();
  let i = 0;
  let nextSample = start;
  while (performance.now() - start < SECONDS * 1000) {
    const due = Math.floor(((performance.now() - start) / 1000) * rate);
    while (i < due) {
      if (inflight.size >= MAX_INFLIGHT) {
        tally.skipped++;
        i++;
        continue;
      }
      const p = one(gw.url, keys[i % KEYS]!, i, tally).finally(() => inflight.delete(p));
      inflight.add(p);
      i++;
    }
    if (performance.now() >= nextSample) {
      const m = await memoryOf(gw.pid);
      const t = Math.round((performance.now() - start) / 1000);
      samples.push({ t, rssMiB: m.rssKiB / 1024, inflight: inflight.size, sent: tally.sent });
      console.log(
        `t=${t}s rss=${(m.rssKiB / 1024).toFixed(1)} MiB inflight=${inflight.size} sent=${tally.sent}`,
      );
      nextSample += SAMPLE_MS;
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  await Promise.all(inflight);
  await new Promise((r) => setTimeout(r, 500)); // the last settlements' group commit

  let held = 0;
  let identityBroken = 0;
  for (const { id } of records) {
    const view = await admin(gw.url, `/admin/keys/${id}`);
    if (view.held_usd !== "0.00") held++;
    const usd = (v: string) => parseUsd(v.replace(/^-/, "")) * (v.startsWith("-") ? -1n : 1n);
    if (usd(view.credited_usd) !== usd(view.balance_usd) + usd(view.held_usd) + usd(view.spent_usd)) {
      identityBroken++;
    }
  }
  const metrics = await fetch(gw.url + "/metrics", { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  const text = metrics.ok ? await metrics.text() : "";
  const openStreams = /^gateway_open_streams (\S+)$/m.exec(text)?.[1] ?? "n/a (no /metrics)";
  const final = await memoryOf(gw.pid);
  const rss = samples.map((s) => s.rssMiB);
  const firstHalf = rss.slice(0, Math.ceil(rss.length / 2));
  const secondHalf = rss.slice(Math.ceil(rss.length / 2));
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

  const lines = [`## ${SOAK_HEADING}`, "", `Command: \`SOAK_SECONDS=${SECONDS} deno task soak\``, ""];
  lines.push(
    `- Date: ${new Date().toISOString()}; ${SECONDS} s at ${rate} requests/s (half of a ` +
      `${peakRps.toFixed(0)}/s peak of the same mix)`,
  );
  lines.push(
    `- Requests: ${tally.sent} sent, ${tally.ok} completed, ${tally.refused} refused (non-200), ${tally.failed} failed ` +
      `mid-body, ${tally.left} clients left mid-stream, ${tally.skipped} not started (generator cap), ` +
      `${tally.hung} hung past 60 s`,
  );
  lines.push(
    `- RSS: first half mean ${mean(firstHalf).toFixed(1)} MiB, second half mean ${
      mean(secondHalf).toFixed(1)
    } MiB, ` +
      `end ${(final.rssKiB / 1024).toFixed(1)} MiB, peak ${(final.hwmKiB / 1024).toFixed(1)} MiB`,
  );
  lines.push(`- Left open at the end: keys with a hold ${held}, open streams ${openStreams}`);
  lines.push(
    `- Ledger identity (credited = balance + held + spent): broken on ${identityBroken} of ${KEYS} keys`,
  );
  lines.push(`- RSS samples (s: MiB): ${samples.map((s) => `${s.t}: ${s.rssMiB.toFixed(0)}`).join(", ")}`);
  const record = lines.join("\n") + "\n";
  console.log("\n" + record);
  const file = `${ROOT}bench/RESULTS.md`;
  await Deno.writeTextFile(file, withSection(await Deno.readTextFile(file), SOAK_HEADING, record));
  await new Deno.Command(Deno.execPath(), { args: ["fmt", "--quiet", file], stdout: "null" }).output();
} finally {
  await gw.stop();
  await sim.stop();
  await Deno.remove(dataDir, { recursive: true });
}

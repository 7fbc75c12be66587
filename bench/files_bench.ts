/**
 * File extraction (spec §8.2, the file limits): every case is uploaded over HTTP to a FRESH gateway subprocess
 * (`deno run -A`, so documents are extracted in the gateway's extraction processes, as in production
 * with --allow-run). Per case: the answer, the wall time, the gateway process's peak RSS above its idle
 * RSS, the extraction processes' peak RSS (VmHWM), both sampled every 5 ms, and the longest stall of the
 * gateway's event loop — /v1/models requested every 10 ms during the upload, the slowest answer.
 * Targets: the ceiling documented in docs/files.md (read from it) and a 100 ms stall.
 *
 * Alone: `deno run -A bench/files_bench.ts` prints the table. `deno task bench` adds the rows.
 */
import { createKey, type Proc, ROOT, startGatewayProc, startSim } from "./procs.ts";
import { ms, type Row, table } from "./report.ts";
import { type Case, CASES } from "./files_runner.ts";

const RUNNER = `${ROOT}bench/files_runner.ts`;
const STALL_TARGET_MS = 100;
const MiB = 1024 * 1024;

export interface Ceiling {
  /** Resident memory of one extraction process (enforced). */
  processMiB: number;
  /** Growth of the gateway process itself per document being uploaded (measured). */
  gatewayMiB: number;
}

/** The numbers of the "Ceiling: …" sentence of docs/files.md. */
export async function documentedCeiling(): Promise<Ceiling> {
  const text = (await Deno.readTextFile(`${ROOT}docs/files.md`)).replace(/\s+/g, " ");
  const m =
    /Ceiling: ≤ ([\d,]+) MiB per extraction process.*?the gateway process itself grows by ≤ ([\d,]+) MiB/
      .exec(text);
  if (!m?.[1] || !m[2]) throw new Error("memory ceiling not found in docs/files.md");
  return { processMiB: Number(m[1].replace(/,/g, "")), gatewayMiB: Number(m[2].replace(/,/g, "")) };
}

const mib = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`;
const size = (bytes: number) =>
  bytes >= MiB ? `${(bytes / MiB).toFixed(2)} MiB` : `${(bytes / 1024).toFixed(0)} KiB`;
const sleep = (n: number) => new Promise((r) => setTimeout(r, n));

function status(pid: number): { rss: number; hwm: number } | undefined {
  try {
    const text = Deno.readTextFileSync(`/proc/${pid}/status`);
    const field = (n: string) => Number(new RegExp(`^${n}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? NaN) * 1024;
    const rss = field("VmRSS"), hwm = field("VmHWM");
    return Number.isFinite(rss) && Number.isFinite(hwm) ? { rss, hwm } : undefined; // a zombie has neither
  } catch {
    return undefined;
  }
}

/** The extraction processes: children of any of the gateway's threads. */
function children(pid: number): number[] {
  const out: number[] = [];
  try {
    for (const t of Deno.readDirSync(`/proc/${pid}/task`)) {
      const text = Deno.readTextFileSync(`/proc/${pid}/task/${t.name}/children`).trim();
      if (text) out.push(...text.split(/\s+/).map(Number));
    }
  } catch { /* gone */ }
  return out;
}

interface Watch {
  stop(): { gatewayPeak: number; childPeaks: number[]; maxPingMs: number; pings: number };
}

/** Samples memory every 5 ms and pings /v1/models every 10 ms until stopped. */
function watch(gw: Proc, key: string): Watch {
  let gatewayPeak = 0, maxPingMs = 0, pings = 0, running = true;
  // Its own connection pool: each case runs a fresh gateway, possibly on the port a stopped one had, and
  // a pooled keep-alive connection to the stopped one must not be reused for it.
  const client = Deno.createHttpClient({});
  const childPeaks = new Map<number, number>();
  const timer = setInterval(() => {
    gatewayPeak = Math.max(gatewayPeak, status(gw.pid)?.rss ?? 0);
    for (const c of children(gw.pid)) {
      childPeaks.set(c, Math.max(childPeaks.get(c) ?? 0, status(c)?.hwm ?? 0));
    }
  }, 5);
  const pinging = (async () => {
    while (running) {
      const t0 = performance.now();
      let res: Response;
      try {
        res = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` }, client });
      } catch (err) {
        // A ping still on its way when the case stopped the watch and then its gateway: not the case's failure.
        if (!running) break;
        throw err;
      }
      await res.body?.cancel();
      maxPingMs = Math.max(maxPingMs, performance.now() - t0);
      pings++;
      await sleep(10);
    }
  })();
  return {
    stop() {
      running = false;
      clearInterval(timer);
      void pinging.finally(() => client.close());
      return { gatewayPeak, childPeaks: [...childPeaks.values()], maxPingMs, pings };
    },
  };
}

async function upload(gw: Proc, key: string, name: string, bytes: Uint8Array) {
  const fd = new FormData();
  fd.append("file", new File([bytes as Uint8Array<ArrayBuffer>], name));
  const client = Deno.createHttpClient({}); // see watch(): never a pooled connection to an earlier gateway
  const res = await fetch(`${gw.url}/v1/files`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}` },
    body: fd,
    client,
  });
  const json = await res.json();
  client.close();
  return res.status === 200 ? "ok" : `${res.status} ${json.detail?.error?.code ?? "?"}`;
}

const EXT: Record<string, string> = { pdf: "pdf", docx: "docx", xlsx: "xlsx", pptx: "pptx", csv: "csv" };

interface Measured {
  outcome: string;
  wallMs: number;
  idleRss: number;
  gatewayGrowth: number;
  childPeak: number;
  maxPingMs: number;
  idlePingMs: number;
  pings: number;
}

/** One or more uploads at once to a fresh gateway that has already extracted one small PDF. */
async function measure(simUrl: string, files: { c: Case; bytes: Uint8Array }[]): Promise<Measured> {
  const gw = await startGatewayProc(simUrl);
  try {
    const key = await createKey(gw.url);
    // Warm-up: one tiny document starts an extraction process; the idle figures include it.
    await upload(gw, key, "warm.pdf", await Deno.readFile(`${Deno.env.get("FILES_BENCH_DIR")}/warm`));
    await sleep(300);
    const idle = watch(gw, key);
    await sleep(500);
    const idleStats = idle.stop();
    const idleRss = status(gw.pid)?.rss ?? 0;
    const w = watch(gw, key);
    const t0 = performance.now();
    const outcomes = await Promise.all(
      files.map(({ c, bytes }, i) => upload(gw, key, `${c.name}-${i}.${EXT[c.kind] ?? c.kind}`, bytes)),
    );
    const wallMs = performance.now() - t0;
    await sleep(50);
    const s = w.stop();
    return {
      outcome: [...new Set(outcomes)].join(", "),
      wallMs,
      idleRss,
      gatewayGrowth: Math.max(0, s.gatewayPeak - idleRss),
      childPeak: Math.max(0, ...s.childPeaks),
      maxPingMs: s.maxPingMs,
      idlePingMs: idleStats.maxPingMs,
      pings: s.pings,
    };
  } finally {
    await gw.stop();
  }
}

export async function benchFiles(
  log: (s: string) => void = (s) => console.error(s),
): Promise<{ rows: Row[]; notes: string[] }> {
  const ceiling = await documentedCeiling();
  const dir = await Deno.makeTempDir({ prefix: "gw-bench-files-" });
  Deno.env.set("FILES_BENCH_DIR", dir);
  const rows: Row[] = [];
  const sim = await startSim();
  try {
    log("file extraction: building fixtures (one subprocess), then one fresh gateway per case");
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", RUNNER, "build", dir],
      cwd: ROOT,
      stdout: "piped",
      stderr: "inherit",
    }).output();
    if (!out.success) throw new Error("fixture build failed");
    const { pdf } = await import("../tests/fixtures/files/build.ts");
    await Deno.writeFile(`${dir}/warm`, await pdf(["warm-up"]));
    const load = async (c: Case) => ({ c, bytes: await Deno.readFile(`${dir}/${c.name}`) });
    /** `docs`: documents uploaded at once (the gateway's ceiling is per document in flight). */
    const row = (label: string, bytes: number, expect: string, m: Measured, docs = 1): Row => {
      const ok = m.outcome === (expect === "ok" ? "ok" : `422 ${expect}`);
      const gwOk = m.gatewayGrowth / MiB <= ceiling.gatewayMiB * docs;
      const childOk = m.childPeak / MiB <= ceiling.processMiB * 1.1;
      const stallOk = m.maxPingMs <= STALL_TARGET_MS;
      log(
        `  ${label}: ${m.outcome} in ${ms(m.wallMs)}; gateway +${mib(m.gatewayGrowth)} over ${
          mib(m.idleRss)
        }; extraction process peak ${mib(m.childPeak)}; /v1/models max ${ms(m.maxPingMs)} (idle max ${
          ms(m.idlePingMs)
        }, ${m.pings} pings)`,
      );
      return {
        metric: `Files: ${label} (${size(bytes)}), fresh gateway`,
        gateway: `${m.outcome}, ${m.wallMs.toFixed(0)} ms; gw +${
          (m.gatewayGrowth / MiB).toFixed(0)
        } MiB (idle ${(m.idleRss / MiB).toFixed(0)}); extractor ${
          (m.childPeak / MiB).toFixed(0)
        } MiB; loop max ${m.maxPingMs.toFixed(0)} ms`,
        target: `${expect}; gw ≤ +${ceiling.gatewayMiB * docs}, extractor ≤ ${
          Math.round(ceiling.processMiB * 1.1)
        } MiB, loop ≤ ${STALL_TARGET_MS}ms`,
        pass: ok && gwOk && childOk && stallOk,
      };
    };
    for (const c of CASES) {
      const f = await load(c);
      rows.push(row(c.label, f.bytes.byteLength, c.expect, await measure(sim.url, [f])));
    }
    // Two of the heaviest legitimate documents at once (both extraction processes busy).
    const xlsx = await load(CASES.find((c) => c.name === "xlsx-10mib")!);
    const both = await measure(sim.url, [xlsx, xlsx]);
    rows.push(row("2 × 10 MiB XLSX at once", xlsx.bytes.byteLength * 2, "ok", both, 2));
    // Every hostile PDF at once: queued behind two extraction processes, the loop still answers.
    const hostile = await Promise.all(CASES.filter((c) => c.name.startsWith("pdf-bomb")).map(load));
    const all = await measure(sim.url, hostile);
    rows.push(
      row(
        `${hostile.length} PDF bombs at once`,
        hostile.reduce((n, h) => n + h.bytes.byteLength, 0),
        "file_limit_exceeded",
        all,
        hostile.length,
      ),
    );
  } finally {
    await sim.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
  const notes = [
    "File extraction rows: 'gw +N MiB (idle M)' is the gateway process's highest VmRSS during the upload " +
    "minus its VmRSS just before (M); 'extractor' is the highest VmHWM of its extraction processes; 'loop " +
    "max' is the slowest GET /v1/models answer while the upload ran (one request every 10 ms; idle it is " +
    "1–3 ms). Targets: the ceiling sentence of docs/files.md (the extraction process limit allows " +
    "10% for the 20 ms sampling) and a 100 ms stall.",
    "File extraction: fixtures are built by bench/files_runner.ts with the test builders " +
    "(tests/fixtures/files/build.ts) in one subprocess; each case then starts a fresh gateway subprocess " +
    "(`deno run -A`, in-memory KV), uploads one small PDF (which starts an extraction process), waits, and " +
    "uploads the case over HTTP. 'gateway RSS' is the gateway process's highest VmRSS during the upload " +
    "minus its VmRSS just before (file bytes, multipart parse, sections and their JSON included); " +
    "'extraction process peak' is the highest VmHWM of the gateway's extraction processes (a killed " +
    "process's last sample). Both are read from /proc every 5 ms. 'event loop' is the slowest of the " +
    "GET /v1/models requests sent every 10 ms during the upload (the gateway answers them on the same " +
    "event loop that receives the upload); 'idle max' is the same over 0.5 s before it.",
    "File fixtures: the 10 MiB XLSX is one sheet of ~9,300 rows × 10 cells (number, date serial, 8 shared " +
    "strings of 150–210 random characters); the 10 MiB DOCX is ~3,500 paragraphs of 4,095 random " +
    "characters; the 200-page PDF has 18 lines of text on every page. PDF bombs: one page whose content " +
    "stream inflates to 768 MiB of spaces, in five spellings of the filter name (≈0.8 MB each, 1.6 MB " +
    "hex-encoded), and the same stream RC4-encrypted with an empty user password (the decompression " +
    "pre-pass cannot read ciphertext: the extraction process's memory limit stops it).",
  ];
  return { rows, notes };
}

if (import.meta.main) {
  const { rows, notes } = await benchFiles();
  console.log(table(rows));
  console.log("");
  for (const n of notes) console.log(`- ${n}`);
}

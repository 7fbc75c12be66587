/** What a reverse proxy under test holds (nginx_process.ts, caddy_process.ts): its temporary directory, its
 *  process and the TLS client that trusts it; `close` ends them, in that order, whatever was started. */
export class ProxyRun {
  proc?: Deno.ChildProcess;
  client?: Deno.HttpClient;

  private constructor(readonly dir: string) {}

  static async create(prefix: string): Promise<ProxyRun> {
    return new ProxyRun(await Deno.makeTempDir({ prefix }));
  }

  close = async (): Promise<void> => {
    this.client?.close();
    if (this.proc) {
      try {
        this.proc.kill("SIGTERM");
      } catch { /* already gone */ }
      await this.proc.status;
    }
    await Deno.remove(this.dir, { recursive: true });
  };
}

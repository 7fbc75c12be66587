/** A browser stand-in for the dashboard's HTTP tests: a cookie jar, forms posted as a browser posts them. */
import assert from "node:assert/strict";

export interface Answer {
  status: number;
  headers: Headers;
  /** Every Set-Cookie value of the answer, as sent. */
  setCookies: string[];
  html: string;
}

export class DashboardClient {
  readonly jar = new Map<string, string>();

  /** `headers`: sent with every request (X-Forwarded-For / -Proto through a trusted proxy). */
  constructor(readonly base: string, readonly headers: Record<string, string> = {}) {}

  #cookieHeader(): Record<string, string> {
    if (this.jar.size === 0) return {};
    return { cookie: [...this.jar].map(([k, v]) => `${k}=${v}`).join("; ") };
  }

  async #send(path: string, init: RequestInit): Promise<Answer> {
    const res = await fetch(this.base + path, {
      ...init,
      redirect: "manual",
      headers: { ...this.headers, ...this.#cookieHeader(), ...init.headers as Record<string, string> },
    });
    const setCookies = res.headers.getSetCookie();
    for (const c of setCookies) {
      const [pair] = c.split(";");
      const eq = pair!.indexOf("=");
      const [name, value] = [pair!.slice(0, eq), pair!.slice(eq + 1)];
      if (/Max-Age=0(;|$)/.test(c)) this.jar.delete(name);
      else this.jar.set(name, value);
    }
    return { status: res.status, headers: res.headers, setCookies, html: await res.text() };
  }

  get(path: string, headers: Record<string, string> = {}): Promise<Answer> {
    return this.#send(path, { headers });
  }

  /** A form post (application/x-www-form-urlencoded), as an HTML form sends it. */
  post(path: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Answer> {
    return this.#send(path, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
      body: new URLSearchParams(fields).toString(),
    });
  }

  /** The CSRF field of the page's form posting to `action` (every form carries one). */
  static csrf(html: string, action = "/dashboard/login"): string {
    const form = html.slice(html.indexOf(`action="${action}"`));
    const m = /name="csrf" value="([^"]+)"/.exec(form);
    assert.ok(m, `no csrf field in the form of ${action}`);
    return m[1]!;
  }

  /** Signs in through the form: GET /dashboard, then POST the key with its CSRF field. */
  async signIn(key: string): Promise<Answer> {
    const form = await this.get("/dashboard");
    assert.equal(form.status, 200, form.html);
    return await this.post("/dashboard/login", { csrf: DashboardClient.csrf(form.html), key });
  }
}

/** The text of the element with `data-testid` (an element without child elements), or undefined. */
export function testid(html: string, id: string): string | undefined {
  const m = new RegExp(`data-testid="${id}"[^>]*>([^<]*)<`).exec(html);
  return m?.[1];
}

/** The attributes of the first element with `data-testid`. */
export function attrs(html: string, id: string): Record<string, string> {
  const m = new RegExp(`<[a-z]+ [^>]*data-testid="${id}"[^>]*>`).exec(html);
  assert.ok(m, `no element ${id}`);
  return Object.fromEntries([...m[0].matchAll(/([a-z-]+)="([^"]*)"/g)].map((a) => [a[1]!, a[2]!]));
}

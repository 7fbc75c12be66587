/**
 * The frame of every dashboard page (Russian, spec §1.9): the head with the gateway's own stylesheet and
 * script (no inline ones: the CSP forbids them), and, when signed in, the key's hint, the navigation and the
 * sign-out form (its button `data-testid="logout"`, on every signed-in page). The empty icon keeps the
 * browser from asking for /favicon.ico, a 404 it reports as a console error
 * (tests/dashboard/dashboard_browser_test.ts).
 */
import { type Html, html } from "../util/html.ts";

export type Section = "overview" | "usage" | "requests";

const NAV: readonly [Section, string, string][] = [
  ["overview", "/dashboard", "Обзор"],
  ["usage", "/dashboard/usage", "Расходы"],
  ["requests", "/dashboard/requests", "Запросы"],
];

export interface SignedIn {
  section: Section;
  /** The key's public hint ("gd-AbCd…"), never the key. */
  hint: string;
  /** The session's CSRF token, for the sign-out form. */
  csrf: string;
}

export function layout(title: string, body: Html, signedIn?: SignedIn): Html {
  return html`
    <!doctype html>
    <html lang="ru">
      <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>${title} — панель ключа</title>
        <link rel="icon" href="data:,">
        <link rel="stylesheet" href="/dashboard/assets/dashboard.css">
        <script src="/dashboard/assets/dashboard.js" defer></script>
      </head>
      <body>
        <header class="top">
    <span class="brand">Панель ключа</span>
    ${signedIn && header(signedIn)}
        </header>
        <main${signedIn ? "" : html`
          class="narrow"
        `}>
    ${body}
    </main>
    </body>
    </html>
  `;
}

function header(s: SignedIn): Html {
  return html`
    <nav>${NAV.map(([id, href, label]) =>
      id === s.section
        ? html`<a href="${href}" aria-current="page">${label}</a>`
        : html`<a href="${href}">${label}</a>`
    )}</nav>
    <span class="hint">Ключ <code>${s.hint}</code></span>
    <form method="post" action="/dashboard/logout" class="inline">
      <input type="hidden" name="csrf" value="${s.csrf}">
      <button type="submit" data-testid="logout">Выйти</button>
    </form>
  `;
}

/** A UTC time as the pages show it ("2026-01-01 10:30:00 UTC"); the script may show it in local time. */
export function utcTime(ms: number): Html {
  const iso = new Date(ms).toISOString();
  return html`<time datetime="${iso}" data-local>${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC</time>`;
}

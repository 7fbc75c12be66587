// The dashboard's progressive enhancement (src/dashboard/): every page works without it.
"use strict";

// Times are written in UTC by the server; show them in the reader's own time zone, UTC kept in the tooltip.
for (const t of document.querySelectorAll("time[data-local]")) {
  const d = new Date(t.getAttribute("datetime"));
  if (Number.isNaN(d.getTime())) continue;
  t.title = t.textContent;
  t.textContent = d.toLocaleString("ru-RU");
}

// The request filters apply as soon as one changes.
for (const form of document.querySelectorAll("form[data-autosubmit]")) {
  for (const select of form.querySelectorAll("select")) {
    select.addEventListener("change", () => form.requestSubmit());
  }
}

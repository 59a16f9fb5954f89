// The console's small parts: times, tables of rows, and write controls that a support
// operator sees disabled (the server refuses their writes anyway: 403 forbidden).
import { h } from "../js/board.js";
import { field, input } from "../js/forms.js";
import { mayWrite } from "./api.js";

/** A time as the server sends it (seconds since the epoch, or ISO text), read locally. */
export function when(t) {
  if (t == null || t === "") return "";
  const d = typeof t === "number" ? new Date(t * 1000) : new Date(t);
  return Number.isNaN(d.getTime()) ? String(t) : d.toLocaleString();
}

const TIMES = /(^at$|^created$|^expires$|^finished$|_at$|^when$)/;

/** One cell's text: times read, lists joined, objects as compact JSON. */
export function cellText(key, v) {
  if (v == null) return "";
  if (TIMES.test(key)) return when(v);
  if (Array.isArray(v)) return v.map((x) => (typeof x === "object" ? JSON.stringify(x) : String(x))).join(", ");
  if (typeof v === "object") return JSON.stringify(v);
  if (typeof v === "boolean") return v ? "✓" : "";
  return String(v);
}

/**
 * Rows of objects as a table: ``columns`` [key, heading] (default: the first row's keys);
 * ``link(row, key)``: an href for a cell, if it should be a link.
 */
export function rowsTable(rows, cls, columns = null, link = null) {
  if (!rows || !rows.length) return h("p", `note empty ${cls}`, "无 none");
  const cols = columns || Object.keys(rows[0]).map((k) => [k, k]);
  const table = h("table", `list ${cls}`, h("tr", "", ...cols.map(([, head]) => h("th", "", head))));
  for (const r of rows) {
    const tr = h("tr", "");
    for (const [k] of cols) {
      const text = cellText(k, r[k]);
      const href = link && link(r, k);
      const td = h("td", typeof r[k] === "number" && !TIMES.test(k) ? "num" : "", "");
      if (href) { const a = h("a", `to-${k}`, text); a.href = href; td.append(a); } else td.textContent = text;
      tr.append(td);
    }
    table.append(tr);
  }
  return table;
}

/** A button that writes: working for an admin, disabled (and saying why) for support. */
export function writeButton(label, cls, onclick) {
  const b = h("button", `write ${cls}`, label);
  if (mayWrite()) b.onclick = onclick;
  else { b.disabled = true; b.title = "只读 support operators read only"; }
  return b;
}

/** A form of a reason and one write button: ``act(reason)`` runs on submit. */
export function reasonForm(cls, label, act, err) {
  const reason = input("text", "", { name: "reason", placeholder: "原因 reason", required: true, maxLength: 500 });
  const go = writeButton(label, "primary", null);
  go.type = "submit";
  const form = h("form", `reason-form ${cls}`, field("原因 Reason", reason), go);
  reason.disabled = !mayWrite();
  form.onsubmit = async (e) => {
    e.preventDefault();
    if (!mayWrite()) return;
    try { await act(reason.value.trim()); } catch (x) { showError(err, x); }
  };
  return form;
}

/** An error said in the box: the server's code and message. */
export function showError(box, e) {
  box.textContent = `${e.code || ""} ${e.message || e}`.trim();
}

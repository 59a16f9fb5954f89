// The audit trail: every operator action, newest first (who, what, when, from where,
// before and after, why); older pages by the last id shown.
import { h } from "../js/board.js";
import * as api from "./api.js";
import { rowsTable } from "./ui.js";

const COLUMNS = [["id", "#"], ["at", "时间 when"], ["operator", "操作员 operator"], ["action", "操作 action"],
  ["target", "对象 target"], ["address", "地址 address"], ["before", "之前 before"], ["after", "之后 after"], ["reason", "原因 reason"]];

export async function auditPage(body) {
  const box = h("div", "panel audit", h("h2", "", "审计 Audit trail"));
  body.append(box);
  const more = async (before) => {
    const { audit: rows } = await api.audit(before);
    const person = (r, k) => (k === "target" && /^person:\d+$/.test(r.target) ? `#/person/${r.target.slice(7)}` : null);
    box.append(rowsTable(rows, "audit", COLUMNS, person));
    if (rows.length === 100) {
      const next = h("button", "more", "更早 Older");
      next.onclick = () => { next.remove(); more(rows[rows.length - 1].id); };
      box.append(next);
    }
  };
  await more(null);
  return null;
}

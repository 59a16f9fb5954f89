// The dispute view of a stored, finished hand: its replay with every hand open (the
// table client's replay), its settlement and its journal lines side by side, and
// whether replaying its record gives it again (as `fangcheng replay` does).
import { h } from "../js/board.js";
import { replayEl } from "../js/replay.js";
import { WINDS } from "../js/text.js";
import * as api from "./api.js";
import { rowsTable } from "./ui.js";

export async function disputePage(body, id) {
  const d = await api.hand(id);
  const same = d.reproduces
    ? h("p", "reproduces ok", "✓ 复现一致 replaying the record gives this hand again (fangcheng replay)")
    : h("p", "reproduces bad", "✗ 复现不一致 replaying the record does NOT give this hand again");
  const c = d.coins; // the booking of a coin hand; null: a point hand (or not booked)
  // a line's seat by its name at the table (the house's lines: a house bot's seat)
  const who = (l) => (l.seat != null ? `${WINDS[l.seat].split(" ")[0]} ${d.names?.[l.seat] ?? ""}`.trim() : "庄家 house");
  const aside = h("div", "panel journal", h("h3", "", "账目 Journal lines"),
    c ? h("p", "note", `盘号 hand ${c.hand_id} · 账 journal ${c.journal_id}`) : h("p", "note", "无金币账目 no coins booked (a point table)"),
    c ? rowsTable(c.lines.map((l) => ({ ...l, who: who(l) })), "journal",
      [["who", "谁 who"], ["account", "账户 account"], ["amount", "数额 amount"], ["memo", "备注 memo"]]) : "");
  const replay = replayEl(d, { id: d.id, back: ["#/", "← 账户 Accounts"], open: true, aside });
  body.append(h("div", "dispute", h("div", "row", h("h2", "", `争议 Dispute · 牌局 #${d.id} · 桌 ${d.table}`), same), replay));
  return null;
}

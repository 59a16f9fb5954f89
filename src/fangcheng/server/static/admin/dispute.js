// The dispute view of a stored, finished hand: its replay with every hand open (the
// table client's replay), its settlement and its journal lines side by side, and
// whether replaying its record gives it again (as `fangcheng replay` does).
import { h } from "../js/board.js";
import { replayEl } from "../js/replay.js";
import * as api from "./api.js";
import { rowsTable } from "./ui.js";

export async function disputePage(body, id) {
  const d = await api.hand(id);
  const same = d.reproduces
    ? h("p", "reproduces ok", "✓ 复现一致 replaying the record gives this hand again (fangcheng replay)")
    : h("p", "reproduces bad", "✗ 复现不一致 replaying the record does NOT give this hand again");
  const lines = d.journal ?? d.journal_lines ?? d.lines ?? [];
  const aside = h("div", "panel journal", h("h3", "", "账目 Journal lines"),
    lines.length ? rowsTable(lines, "journal") : h("p", "note", "无金币账目 no coins moved (a point table)"));
  const replay = replayEl(d, { id, back: ["#/", "← 账户 Accounts"], open: true, aside });
  body.append(h("div", "dispute", h("h2", "", `争议 Dispute · 牌局 #${id}`), same, replay));
  return null;
}

// Every live table across the processes (refreshed), a table as a spectator sees it —
// the table client's board, never a concealed tile — and closing one with a reason
// (D92: the hand abandoned, its people told why).
import { boardEl, fromEvents, fromObservation, h } from "../js/board.js";
import { rulesName } from "../js/text.js";
import * as api from "./api.js";
import { reasonForm, rowsTable } from "./ui.js";

const LIST_MS = 5000, VIEW_MS = 2000;

const KINDS = { practice: "练习 practice", private: "私人 private", coin: "金币 coin" };

export async function tablesPage(body) {
  const box = h("div", "panel tables-list", h("h2", "", "牌桌 Live tables"), h("p", "note", "每 5 秒刷新 refreshed every 5 s"));
  const list = h("div", "");
  box.append(list);
  body.append(box);
  const load = async () => {
    const { tables } = await api.tables();
    list.replaceChildren(rowsTable(tables.map((t) => ({
      ...t, kind: KINDS[t.kind] || t.kind, rules: rulesName(t.rules), people: (t.people || []).join(", "),
      hand: t.hand != null ? t.hand + 1 : "",
    })), "tables", [["code", "桌号 code"], ["kind", "类 kind"], ["rules", "规则 rules"], ["room", "场 room"],
      ["people", "玩家 people"], ["hand", "盘 hand"], ["process", "进程 process"]],
    (r, k) => (k === "code" ? `#/table/${r.code}` : null)));
  };
  await load();
  const timer = setInterval(() => load().catch(() => {}), LIST_MS);
  return () => clearInterval(timer);
}

/** The spectator's model of the answer: its observation (``seat`` null), else its
 *  public events. */
function modelOf(v) {
  const seats = (v.table?.seats || []).map((x) => ({ name: x?.name || x?.kind || "" }));
  if (v.observation) return fromObservation(v.observation, seats);
  return fromEvents(v.events || [], seats, 0);
}

export async function tablePage(body, code) {
  const err = h("p", "error", "");
  const head = h("div", "row", h("a", "back", "← 牌桌 Tables"), h("h2", "", `桌 ${code}`), h("span", "note", "旁观视角 the spectator's view"));
  head.querySelector(".back").href = "#/tables";
  const info = h("p", "note table-facts", "");
  const board = h("div", "spectate");
  const close = reasonForm("close-table", "关闭牌桌 Close the table", async (reason) => {
    await api.closeTable(code, reason);
    location.hash = "#/tables";
  }, err);
  body.append(h("div", "panel table-view", head, info, board,
    h("h3", "", "关闭 Close (D92: 本盘作废 the hand is abandoned — no win payments, no fees, no 逃跑; kongs paid stay)"), close, err));
  const load = async () => {
    const v = await api.table(code);
    const t = v.table || {};
    info.textContent = [rulesName(t.rules), t.room, t.status, v.hand != null ? `第${v.hand + 1}盘 hand ${v.hand + 1}` : ""].filter(Boolean).join(" · ");
    board.replaceChildren(boardEl(modelOf(v)));
  };
  await load();
  const timer = setInterval(() => load().catch((e) => { err.textContent = `${e.code}: ${e.message}`; }), VIEW_MS);
  return () => clearInterval(timer);
}

// Every live table across the processes (refreshed), a table as a spectator sees it —
// the table client's board, never a concealed tile — and closing one with a reason
// (D92: the hand abandoned, its people told why).
import { boardEl, fromEvents, fromObservation, h } from "../js/board.js";
import { settlementEl } from "../js/settle.js";
import { ROOMS, rulesName, WINDS } from "../js/text.js";
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
    const { tables, unreachable } = await api.tables();
    list.replaceChildren(rowsTable(tables.map((t) => ({
      ...t, kind: KINDS[t.kind] || t.kind, rules: rulesName(t.rules), room: ROOMS[t.room] ?? t.room, people: (t.people || []).join(", "),
      hand: t.hand != null ? t.hand + 1 : "",
    })), "tables", [["code", "桌号 code"], ["kind", "类 kind"], ["rules", "规则 rules"], ["room", "场 room"],
      ["status", "状态 status"], ["people", "玩家 people"], ["hand", "盘 hand"], ["process", "进程 process"]],
    (r, k) => (k === "code" ? `#/table/${r.code}` : null)));
    if (unreachable?.length) list.append(h("p", "error", `未响应的进程 processes not answering: ${unreachable.join(", ")}`));
  };
  await load();
  const timer = setInterval(() => load().catch(() => {}), LIST_MS);
  return () => clearInterval(timer);
}

/** What a spectator attaching now is sent (``frames``), read as the table client reads
 *  them: the table, the hand's public events and view, the last settlement between hands. */
function readFrames(frames) {
  const v = { table: null, hand: null, events: [], observation: null, end: null };
  for (const f of frames) {
    if (f.type === "welcome" || f.type === "table") v.table = f.table;
    else if (f.type === "events") { v.hand = f.hand; v.events = f.events; }
    else if (f.type === "view") v.observation = f.observation;
    else if (f.type === "hand_end") v.end = f;
  }
  return v;
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
    const v = readFrames((await api.table(code)).frames);
    const t = v.table || {};
    const seats = (t.seats || []).map((x) => ({ name: x?.name || x?.kind || "" }));
    info.textContent = [rulesName(t.rules), ROOMS[t.coins?.room] ?? t.coins?.room, t.status, v.hand != null ? `第${v.hand + 1}盘 hand ${v.hand + 1}` : ""]
      .filter(Boolean).join(" · ");
    const who = (s) => `${WINDS[s].split(" ")[0]} ${seats[s]?.name || ""}`.trim();
    const parts = [];
    if (v.observation) parts.push(boardEl(fromObservation(v.observation, seats)));
    if (v.end && t.status !== "playing") { // between hands: the last settlement, as its seats saw it
      const model = fromEvents(v.events, seats, 0);
      parts.push(settlementEl(v.end, v.events, model, who, t.rules));
    }
    if (!parts.length) parts.push(h("p", "note", "未开局 no hand being played"));
    board.replaceChildren(...parts);
  };
  await load();
  const timer = setInterval(() => load().catch((e) => { err.textContent = `${e.code}: ${e.message}`; }), VIEW_MS);
  return () => clearInterval(timer);
}

// A finished hand step by step (GET /api/hands/{id}): from any seat's view, the public
// view, or every hand open; forward, back, to the start, to the end. The operators'
// dispute view (static/admin) shows the same, every hand open, as no seat.
import * as api from "./api.js";
import { boardEl, centerEl, fromEvents, h } from "./board.js";
import { settlementEl } from "./settle.js";
import { eventLine, rulesName, WINDS } from "./text.js";

export async function replayPage(root, id, seat) {
  root.replaceChildren(h("p", "panel", "载入 loading…"));
  let data;
  try { data = await api.hand(id); } catch (e) { root.replaceChildren(h("p", "panel error", e.message)); return; }
  root.replaceChildren(replayEl(data, { id, seat: Number(data.seat ?? seat ?? 0) || 0, back: ["#/hands", "← 我的牌局 My hands"] }));
}

/**
 * The replay of a stored hand ``data`` ({record, views, names}): ``seat``, the viewer's
 * (null: no seat's — every stream from seat 0's side, nobody "you"); ``back``: [href,
 * label] of the top bar's link; ``open``: start at the end with every hand open;
 * ``aside``: an element shown beside the settlement (the dispute view's journal lines).
 */
export function replayEl(data, { id, seat = null, back, open = false, aside = null }) {
  const record = data.record;
  const views = data.views || [];
  const mine = seat ?? 0;
  // each seat's name as the table showed it (a hand stored before names were kept: winds)
  const stored = data.names || [];
  const named = (s) => (stored[s] ? `${WINDS[s].split(" ")[0]} ${stored[s]}` : WINDS[s]);
  const who = (s) => (s === seat ? "你 You" : named(s));
  // the streams to choose from: each seat's, the public one, and the record's (all open)
  const streams = [0, 1, 2, 3].map((s) => ({ label: `${named(s)} 视角 seat ${s}'s view`, events: views[s], me: s }));
  if (views[4]) streams.push({ label: "旁观 public view", events: views[4], me: mine });
  streams.push({ label: "全部明牌 all hands open", events: record.events, me: mine });
  const names = [0, 1, 2, 3].map((s) => (s === seat ? `${stored[s] || "you"} (你)` : stored[s] || ""));
  let which = open ? streams.length - 1 : streams.findIndex((x) => x.me === mine && x.events);
  let step = open ? record.events.length : 0;

  const page = h("div", "replay-page");
  const render = () => {
    const { events, me } = streams[which];
    const n = events.length;
    step = Math.max(0, Math.min(step, n));
    const shown = events.slice(0, step);
    const model = fromEvents(shown, names.map((name) => ({ name })), me);
    const last = shown[shown.length - 1];
    const top = h("div", "topbar", h("a", "home", back[1]),
      h("span", "title", `回放 Replay · ${rulesName(record.rules)} · #${id}`));
    top.querySelector(".home").href = back[0];
    const pick = h("select", "view");
    streams.forEach((x, i) => { if (!x.events) return; const o = h("option", "", x.label); o.value = i; o.selected = i === which; pick.append(o); });
    pick.onchange = () => { which = Number(pick.value); render(); };
    const btn = (cls, label, fn, disabled) => { const b = h("button", cls, label); b.onclick = fn; b.disabled = disabled; return b; };
    const controls = h("div", "controls",
      btn("first", "◀◀ 开始 Start", () => { step = 0; render(); }, step === 0),
      btn("back", "◀ 后退 Back", () => { step--; render(); }, step === 0),
      h("span", "step", `${step} / ${n}`),
      btn("forward", "前进 Forward ▶", () => { step++; render(); }, step === n),
      btn("last", "结束 End ▶▶", () => { step = n; render(); }, step === n),
      pick);
    const center = h("div", "center-info", centerEl(model), h("div", "phase", last ? eventLine(last, who, 0) || `${last.seat != null ? who(last.seat) + " " : ""}${last.type === "draw" ? "摸 draw" : last.type}` : "开局 before the deal"));
    const board = boardEl(model, { center });
    const log = h("div", "log", h("h3", "", "记录 Log"));
    const list = h("ol", "");
    shown.forEach((e) => { const line = eventLine(e, who, 0); if (line) list.append(h("li", `ev-${e.type}`, line)); });
    log.append(list);
    const body = h("div", "play", h("div", "main", board), log);
    const parts = [top, controls, body];
    if (step === n && record.settlement) {
      const end = settlementEl({ hand: record.hand ?? 0, settlement: record.settlement, base: record.base, cap: record.options?.cap }, events, model, who, record.rules);
      parts.push(aside ? h("div", "end-row", end, aside) : end);
    }
    page.replaceChildren(...parts);
    queueMicrotask(() => { list.scrollTop = list.scrollHeight; });
  };
  document.onkeydown = (e) => {
    if (!document.body.contains(page)) { document.onkeydown = null; return; }
    if (e.key === "ArrowRight") step++; else if (e.key === "ArrowLeft") step--;
    else if (e.key === "End") step = Infinity; else if (e.key === "Home") step = 0; else return;
    render();
  };
  render();
  return page;
}

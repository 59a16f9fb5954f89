// The settlement of a hand: each win in turn with its fans and payers, every payment
// with who paid whom and why, fees, the totals, and every hand laid open.
import { h } from "./board.js";
import { tileEl, tilesEl } from "./tiles.js";
import { RULESETS } from "./rules.js";
import { byText, plainWhy, reasonText } from "./text.js";

const signed = (v) => (v > 0 ? `+${v}` : String(v));

/** "West pays East 8, North pays East 8": who paid whom, from one row of deltas. */
export function whoPaysWhom(deltas, who) {
  const plus = [], minus = [];
  deltas.forEach((d, s) => (d > 0 ? plus : d < 0 ? minus : []).push(s));
  if (plus.length === 1) return minus.map((s) => `${who(s)} → ${who(plus[0])} ${-deltas[s]}`).join(" · ");
  if (minus.length === 1) return plus.map((s) => `${who(minus[0])} → ${who(s)} ${deltas[s]}`).join(" · ");
  return deltas.map((d, s) => (d ? `${who(s)} ${signed(d)}` : null)).filter(Boolean).join(" · ");
}

/** A rule set's caps, with the table's ``cap`` option in place of its own. */
function capsOf(rules, cap) {
  const r = RULESETS[rules] || {};
  const fans = r.cap_fans ?? null, base = r.cap_base ?? null;
  if (cap == null) return { fans, base };
  return fans != null ? { fans: cap, base } : { fans, base: cap };
}

function winEl(win, detail, who, model, ctx) {
  const box = h("div", "win-box");
  const from = win.source != null ? ` · from ${who(win.source)} 放炮` : "";
  box.append(h("div", "win-title", `${who(win.seat)} 胡 wins on `, tileEl(win.tile, { size: "small" }),
    ` ${byText(win.by)}${from}`));
  const seat = model?.seats[win.seat];
  if (seat && seat.open) {
    const row = h("div", "win-hand", tilesEl(seat.hand.filter(Boolean), { size: "small" }));
    row.append(tileEl(win.tile, { size: "small", extra: "win" }));
    for (const m of seat.melds) row.append(h("span", "meld", tilesEl(m.tiles, { size: "small" })));
    box.append(row);
  }
  const table = RULESETS[ctx.rules]?.fans || {};
  const fans = (detail?.fans || win.fans.map((name) => ({ name }))).map((f) => ({
    name: f.name, en: f.en ?? table[f.name]?.[0], value: f.value ?? table[f.name]?.[1], why: table[f.name]?.[2],
  }));
  const list = h("table", "fans");
  for (const f of fans) {
    const tr = h("tr", "", h("td", "fan-cn", f.name), h("td", "fan-en", f.en || ""), h("td", "num", f.value != null ? `${f.value} 番` : ""));
    if (f.why) tr.title = plainWhy(f.why);
    list.append(tr);
  }
  if (!fans.length) list.append(h("tr", "", h("td", "fan-cn", "(无番 no fans)")));
  const sum = fans.reduce((a, f) => a + (f.value || 0), 0);
  box.append(list);
  const pays = h("table", "payers");
  pays.append(h("tr", "", h("th", "", "付 payer"), h("th", "", "番 N (2^N × 底注)"), h("th", "num", "付 pays")));
  const caps = capsOf(ctx.rules, ctx.cap);
  const base = ctx.base || 1;
  const payers = detail?.payers || win.deltas.map((d, s) => ({ seat: s, amount: -d })).filter((p) => p.amount > 0);
  for (const p of payers) {
    // each payer's N is read back from 底注 × 2^N; a payer's own fans are what it adds
    const log = Math.log2(p.amount / base);
    const n = p.fan ?? (Number.isInteger(log) ? log : null);
    let capped = p.cap ? (p.cap.fans != null ? `${p.cap.fans} 番` : `${p.cap.coins}`) : "";
    // without the server's scores (an older server), the cap is read from the amounts
    if (!detail && !capped && caps.fans != null && n === caps.fans && sum >= caps.fans) capped = `${caps.fans} 番`;
    if (!detail && !capped && caps.base != null && p.amount === caps.base * base) capped = `${caps.base} × 底注`;
    // the payer's own fans (报听, 坐庄 …) by name: the server's list for the payer, less
    // the winner's fans (each once: a fan of both sides may stand in both)
    const own = [...(p.fans || [])];
    for (const f of fans) { const i = own.indexOf(f.name); if (i >= 0) own.splice(i, 1); }
    const mine = own.map((name) => `${name}${table[name] ? ` ${table[name][0]}` : ""}`).join(", ");
    const extra = !capped && n != null && n > sum ? ` + ${n - sum} 付方番 payer's own${mine ? ` (${mine})` : ""}` : "";
    const cell = n == null ? "—" : `${sum} 番${extra} → N = ${n}`;
    const capEl = capped ? h("span", "cap", ` 封顶 capped at ${capped}`) : null;
    pays.append(h("tr", "", h("td", "", who(p.seat)), h("td", "", cell, capEl), h("td", "num", h("b", "", String(p.amount)))));
  }
  box.append(pays);
  return box;
}

/**
 * The settlement panel. ``end``: the hand_end frame; ``events``: the seat's stream of the
 * hand; ``model``: the table read from them (hands laid open); ``who``: seat names.
 */
export function settlementEl(end, events, model, who, rules = "") {
  const s = end.settlement;
  const panel = h("div", "settlement");
  const wins = events.filter((e) => e.type === "win");
  const how = { win: "胡牌 A hand won", draw: wins.length ? "牌墙摸完 The wall ran out" : "流局 Drawn hand", escape: "逃跑 Abandoned",
    abandoned: "运营关桌 Closed by an operator: no win payments, no fees" }[s.end] || s.end;
  panel.append(h("h2", "", `第${end.hand + 1}盘 Hand ${end.hand + 1} · ${how}`));
  const details = end.wins || [];
  const winsBox = h("div", "wins");
  if (rules === "sichuan") panel.append(h("p", "note", "血战到底: each win in turn 依次胡牌; kongs paid at once 刮风下雨; at the wall's end 查花猪 查大叫 退税"));
  const ctx = { rules, base: end.base, cap: end.cap };
  wins.forEach((w, i) => winsBox.append(winEl(w, details[i], who, model, ctx)));
  panel.append(winsBox);
  const pigs = events.filter((e) => e.type === "flower_pig");
  for (const p of pigs) panel.append(h("p", "warn", `${who(p.seat)} passed a win in the last four tiles: 花猪 flower pig`));

  const table = h("table", "items");
  const head = h("tr", "", h("th", "", "项目 item"));
  for (let k = 0; k < 4; k++) head.append(h("th", "num", who(k)));
  head.append(h("th", "detail", "谁付谁 who paid whom"));
  table.append(head);
  const row = (label, values, cls = "", detail = "") => {
    const tr = h("tr", cls, h("td", "", label));
    values.forEach((v) => tr.append(h("td", `num ${v > 0 ? "up" : v < 0 ? "down" : ""}`, v ? signed(v) : "·")));
    tr.append(h("td", "detail", detail));
    table.append(tr);
  };
  const bloody = rules === "sichuan";
  for (const item of s.items) {
    row(reasonText(item.reason, who) + (bloody ? rain(item.reason) : ""), item.deltas, kindOf(item.reason), whoPaysWhom(item.deltas, who));
  }
  if (s.fees.some(Boolean)) row("台费 service fee", s.fees.map((f) => -f), "fee");
  row("本盘 this hand", s.total, "total");
  // a coin hand: a seat that could not pay it all paid its balance, shared out (D44)
  const paid = end.coins && !end.coins.error ? end.coins.total : null;
  if (paid && paid.some((v, k) => v !== s.total[k])) row("实付 coins paid (余额封顶 capped by balance)", paid, "paid");
  // the match's points; at a coin table the coins are what count (the balance below)
  if (end.standings && !end.coins) row("累计 match total", standingsOf(end.standings), "standing");
  panel.append(table);

  if (model && model.seats.some((x) => x.hand.some(Boolean) || x.melds.length)) { // none before the deal (an escape at 漂)
    const hands = h("div", "open-hands", h("h3", "", "亮牌 the hands laid open"));
    model.seats.forEach((x, k) => {
      const row = h("div", "open-hand", h("span", "who", who(k)), tilesEl(x.hand.filter(Boolean), { size: "tiny" }));
      for (const m of x.melds) row.append(h("span", "meld", tilesEl(m.tiles, { size: "tiny" })));
      if (x.won && x.winTile) row.append(" 胡 ", tileEl(x.winTile, { size: "tiny", extra: "win" }));
      hands.append(row);
    });
    panel.append(hands);
  }
  return panel;
}

/** Standings by seat: four numbers, or the server's rows ``{seat, score, rank}``. */
export function standingsOf(st) {
  const out = [0, 0, 0, 0];
  if (!Array.isArray(st)) return out;
  st.forEach((r, i) => {
    if (typeof r === "number") out[i] = r;
    else out[r.seat ?? i] = r.score ?? 0;
  });
  return out;
}

/** 血战's kongs are paid as they are made: 刮风 for an exposed kong, 下雨 for a concealed one. */
function rain(reason) {
  if (reason.startsWith("暗杠")) return " · 下雨 rain";
  if (/^(明杠|补杠|直杠|弯杠|大杠)/.test(reason)) return " · 刮风 wind";
  return "";
}

const KINDS = [
  ["胡", "item-win"], ["刮风", "item-kong"], ["下雨", "item-kong"], ["杠", "item-kong"],
  ["查花猪", "item-check"], ["查大叫", "item-check"], ["退税", "item-check"], ["漂", "item-piao"],
];
const kindOf = (reason) => (KINDS.find(([k]) => reason.includes(k)) || ["", ""])[1];


// The table drawn from one model, built either from an observation (live play) or by
// reading a seat's event stream (the replay). Bottom is the seat ``me``; the others sit
// right (下家), top (对家) and left (上家).
import { parseTiles, removeOne, sortTiles, tileEl, tilesEl, SUIT_CN } from "./tiles.js";
import { WINDS } from "./text.js";

const h = (tag, cls, ...kids) => {
  const el = document.createElement(tag);
  if (cls) el.className = cls;
  for (const k of kids) if (k != null) el.append(k);
  return el;
};
export { h };

/** The model of an observation (``names``: the four seats' names and states). */
export function fromObservation(obs, seats) {
  const own = obs.seat; // null: a spectator, who sits nowhere and sees no concealed tile
  const me = own ?? 0;
  const model = {
    me, dealer: obs.dealer, turn: obs.turn, phase: obs.phase, wall: obs.wall,
    treasure: obs.treasure, retired: parseTiles(obs.retired || ""),
    lastDiscard: obs.last_discard, scores: obs.scores,
    seats: obs.seats.map((v, s) => {
      const melds = v.melds.map((m) => ({ kind: m.kind, tiles: parseTiles(m.tiles), from: m.from }));
      for (let k = 0; k < v.hidden_kongs; k++) melds.push({ kind: "an_gang", tiles: [null, null, null, null] });
      let hand, drawn = null;
      if (s === own && obs.hand != null) {
        hand = sortTiles(parseTiles(obs.hand));
        if (obs.drawn) { removeOne(hand, obs.drawn); drawn = obs.drawn; }
      } else if (v.revealed) hand = sortTiles(parseTiles(v.revealed));
      else hand = Array(v.concealed).fill(null);
      return {
        ...(seats?.[s] || {}), hand, drawn, melds, river: parseTiles(v.river),
        ready: v.ready, que: v.que, won: v.won, piao: v.piao, open: s === own || !!v.revealed,
      };
    }),
  };
  return model;
}

/** Read events into a model: what the stream's reader knows after them. */
export function fromEvents(events, seats, me) {
  const st = {
    me, dealer: 0, turn: 0, wall: null, treasure: null, retired: [], lastDiscard: null,
    scores: [0, 0, 0, 0],
    seats: [0, 1, 2, 3].map((s) => ({
      ...(seats?.[s] || {}), hand: [], drawn: null, melds: [], river: [], ready: false,
      que: null, won: false, piao: 0, open: s === me, winTile: null,
    })),
  };
  const take = (s, t) => { // a tile leaves a hand: known, or one of the hidden ones
    const seat = st.seats[s];
    if (seat.drawn && (seat.drawn === t || !t)) { seat.drawn = null; return; }
    if (t && removeOne(seat.hand, t)) return;
    removeOne(seat.hand, null);
  };
  const settle = (s) => { // the drawn tile joins the hand
    const seat = st.seats[s];
    if (seat.drawn !== null || seat.drawnHidden) {
      seat.hand.push(seat.drawn);
      seat.drawn = null; seat.drawnHidden = false;
    }
    seat.hand = sortTiles(seat.hand.filter(Boolean)).concat(seat.hand.filter((x) => !x));
  };
  for (const e of events) {
    const seat = st.seats[e.seat];
    switch (e.type) {
      case "deal":
        st.dealer = st.turn = e.dealer;
        e.hands.forEach((hand, s) => {
          const n = s === e.dealer ? 14 : 13;
          st.seats[s].hand = hand != null ? sortTiles(parseTiles(hand)) : Array(n).fill(null);
          st.seats[s].open = hand != null;
        });
        break;
      case "treasure":
        if (st.treasure) st.retired.push(st.treasure);
        st.treasure = e.tile; break;
      case "piao": e.bets.forEach((b, s) => (st.seats[s].piao = b)); break;
      case "que": e.suits.forEach((q, s) => (st.seats[s].que = q)); break;
      case "draw": case "replacement":
        st.seats.forEach((_, s) => settle(s));
        st.turn = e.seat;
        if (e.tile) seat.drawn = e.tile; else { seat.hand.push(null); }
        st.lastDiscard = null;
        break;
      case "discard":
        take(e.seat, e.tile);
        settle(e.seat);
        seat.river.push(e.tile);
        if (e.ready) seat.ready = true;
        st.lastDiscard = [e.seat, e.tile];
        break;
      case "call": {
        const tiles = parseTiles(e.tiles);
        const src = st.seats[e.source];
        const called = src.river[src.river.length - 1];
        if (called) src.river.pop();
        const rest = [...tiles];
        removeOne(rest, called);
        for (const t of rest) take(e.seat, t);
        seat.melds.push({ kind: e.kind, tiles, from: e.source });
        st.turn = e.seat; st.lastDiscard = null;
        break;
      }
      case "kong":
        settle(e.seat);
        if (e.kind === "an_gang") {
          for (let k = 0; k < 4; k++) take(e.seat, e.tile);
          seat.melds.push({ kind: "an_gang", tiles: Array(4).fill(e.tile || null), hiddenFace: !e.tile });
        } else if (e.kind === "xuanfeng") {
          const tiles = parseTiles(e.tiles || "CFP");
          for (const t of tiles) take(e.seat, t);
          seat.melds.push({ kind: "xuanfeng", tiles });
        } else {
          take(e.seat, e.tile);
          const m = seat.melds.find((m) => (e.kind === "bugang" ? m.kind === "peng" && m.tiles[0] === e.tile : m.kind === "xuanfeng"));
          if (m) { m.tiles.push(e.tile); if (e.kind === "bugang") m.kind = "bu_gang"; }
        }
        break;
      case "robbed": settle(e.seat); take(e.seat, e.tile); break;
      case "win": {
        seat.won = true; seat.winTile = e.tile;
        if (e.by === "discard" && e.source != null) {
          const src = st.seats[e.source];
          if (src.river[src.river.length - 1] === e.tile) src.river.pop();
        } else if (e.by === "self_draw" || e.by === "fenzhang") take(e.seat, e.tile);
        e.deltas.forEach((d, s) => (st.scores[s] += d));
        st.lastDiscard = null;
        break;
      }
      case "payment": e.deltas.forEach((d, s) => (st.scores[s] += d)); break;
      case "reveal":
        e.hands.forEach((hand, s) => {
          const x = st.seats[s];
          x.hand = sortTiles(parseTiles(hand)); x.drawn = null; x.open = true;
          const faces = parseTiles(e.an_gang[s] || "");
          for (const m of x.melds) if (m.kind === "an_gang" && m.hiddenFace) { m.tiles = Array(4).fill(faces.shift()); m.hiddenFace = false; }
        });
        break;
      default: break;
    }
  }
  return st;
}

// --- drawing -------------------------------------------------------------------------

const POSITIONS = ["bottom", "right", "top", "left"];

function meldEl(m) {
  // an 暗杠 its owner (or anyone, once the hand is over) sees: two faces between two backs
  const t = m.tiles[0];
  const tiles = m.kind === "an_gang" && t !== null ? [null, t, t, null] : m.tiles;
  const el = h("span", `meld ${m.kind}`, tilesEl(tiles, { size: "small" }));
  el.title = MELDS[m.kind] || m.kind;
  return el;
}

const MELDS = {
  chi: "吃 chi", peng: "碰 peng", ming_gang: "明杠 kong", bu_gang: "补杠 kong",
  an_gang: "暗杠 concealed kong", xuanfeng: "旋风杠 中发白",
};

export function marksEl(model, s) {
  const x = model.seats[s];
  const marks = h("span", "marks");
  const mark = (cls, text, title) => { const m = h("span", `mark ${cls}`, text); m.title = title; marks.append(m); };
  if (s === model.dealer) mark("dealer", "庄", "庄 dealer");
  if (x.que) mark("que", `缺${SUIT_CN[x.que]}`, `定缺 void of ${x.que}`);
  if (x.piao) mark("piao", `漂${x.piao}`, `漂 bet ${x.piao}`);
  if (x.ready) mark("ready", "听", "报听 declared ready");
  if (x.won) mark("won", "胡", "胡 won");
  if (x.auto) mark("auto", "托管", "托管 a bot plays for this seat");
  if (x.connected === false && x.kind === "person") mark("offline", "离线", "disconnected");
  return marks;
}

/**
 * The whole table. ``opts``: ``center`` (an element for the middle), ``onTile(t, el)``
 * (click on one of my tiles), ``playable`` (a Set of tiles that may be clicked),
 * ``highlight`` (a Set of tiles to mark).
 */
export function boardEl(model, opts = {}) {
  const table = h("div", "board");
  for (let k = 0; k < 4; k++) {
    const s = (model.me + k) % 4;
    const x = model.seats[s];
    const pos = POSITIONS[k];
    const mine = k === 0;
    const plate = h("div", "plate",
      h("span", "wind", WINDS[s]),
      x.name ? h("span", "name", x.name) : null,
      marksEl(model, s),
      h("span", `score ${model.scores[s] > 0 ? "up" : model.scores[s] < 0 ? "down" : ""}`,
        model.scores[s] ? (model.scores[s] > 0 ? "+" : "") + model.scores[s] : ""),
      x.total != null ? h("span", "total", `总 ${x.total}`) : null);
    if (model.turn === s && !["end", "piao", "que"].includes(model.phase)) plate.classList.add("turn");
    const hand = h("div", `hand ${mine ? "mine" : ""}`);
    const size = mine && x.open ? "big" : "small";
    x.hand.forEach((t) => {
      const el = tileEl(t, { size });
      if (mine && t && opts.onTile) {
        if (opts.playable?.has(t)) { el.classList.add("playable"); el.tabIndex = 0; el.onclick = () => opts.onTile(t, el); }
        else el.classList.add("idle");
      }
      if (opts.highlight?.has(t)) el.classList.add("hint");
      hand.append(el);
    });
    if (x.drawn !== undefined && x.drawn !== null) {
      const el = tileEl(x.drawn, { size, extra: "drawn" });
      if (mine && opts.onTile && opts.playable?.has(x.drawn)) { el.classList.add("playable"); el.tabIndex = 0; el.onclick = () => opts.onTile(x.drawn, el); }
      hand.append(el);
    }
    if (x.won && x.winTile) hand.append(tileEl(x.winTile, { size, extra: "win" })); // (a win's tile leaves the hand)
    const melds = h("div", "melds");
    for (const m of x.melds) melds.append(meldEl(m));
    const river = h("div", "river");
    x.river.forEach((t, i) => {
      const last = model.lastDiscard && model.lastDiscard[0] === s && i === x.river.length - 1;
      river.append(tileEl(t, { size: "small", extra: last ? `last${opts.fresh ? " fresh" : ""}` : "" }));
    });
    const area = h("div", `seat ${pos}`, plate, h("div", "handrow", hand, melds));
    area.dataset.seat = s;
    const wrap = h("div", `river-wrap ${pos}`, river);
    wrap.dataset.label = WINDS[s].split(" ")[0];
    table.append(area, wrap);
  }
  table.append(h("div", "center", opts.center || centerEl(model)));
  return table;
}

/** The middle of the table: wall, treasure, whose turn. */
export function centerEl(model) {
  const c = h("div", "center-info");
  if (model.wall != null) c.append(h("div", "wall", h("b", "", String(model.wall)), " 余牌 wall"));
  if (model.treasure !== null && model.treasure !== undefined) {
    c.append(h("div", "treasure", tileEl(model.treasure, { size: "small" }), " 宝 treasure"));
  }
  if (model.retired?.length) c.append(h("div", "retired", "换宝 retired ", tilesEl(model.retired, { size: "tiny" })));
  return c;
}

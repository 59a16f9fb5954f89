// The table page: one websocket (docs/protocol.md), the seat's events and observation,
// the call buttons with the deadline, the log, and the settlement at a hand's end.
import * as api from "./api.js";
import { boardEl, centerEl, fromEvents, fromObservation, h } from "./board.js";
import { RULESETS } from "./rules.js";
import { rulesEl } from "./rulespage.js";
import { settlementEl, standingsOf } from "./settle.js";
import { actionLabel, actionTiles, eventLine, plainWhy, rulesName, WINDS } from "./text.js";
import { unseen, waits } from "./aids.js";
import * as feel from "./feel.js";
import { parseTiles, removeOne, tileEl, tilesEl } from "./tiles.js";

/** The bot levels a table's owner may fill seats with (and a practice table's). */
export const BOT_LEVELS = [["efficient", "机器人 efficient bots"], ["strong", "强 strong bots"],
  ["expert", "专家 expert bots (search, slower)"], ["random", "随机 random bots"]];

/** The auto toggles: each answers a kind of prompt for the person, on this page. */
const TOGGLES = [
  ["hu", "自动胡 Auto win", "take every win offered, at once"],
  ["noCalls", "不吃碰 No calls", "pass every 吃, 碰 and 杠 offered on a discard (never a win)"],
  ["tsumogiri", "自动摸切 Auto discard", "once ready, discard each drawn tile unless it wins"],
];

/** The tile a suggested discard (or 报听 discard) names, else null. */
function adviceTile(action) {
  const [kind, tile] = action.split(" ");
  return kind === "discard" || kind === "ting" ? tile : null;
}

export class TableView {
  constructor(root, code) {
    this.root = root; this.code = code;
    this.seat = null; this.info = null; this.obs = null; this.prompt = null;
    this.hand = -1; this.events = []; this.ending = null; this.matchEnd = null;
    this.sent = false; this.ting = false; this.retry = 0; this.closed = false;
    this.toast = ""; this.showEnd = false;
    // the auto toggles, kept for the table in this tab (across hands and reloads)
    this.news = []; // events not yet felt (sound, callouts)
    this.toggles = JSON.parse(sessionStorage.getItem(`fangcheng.toggles.${code}`) || "{}");
    this.timer = setInterval(() => this.tick(), 200);
    this.connect();
  }

  // --- the connection ----------------------------------------------------------------

  connect() {
    const s = api.session();
    this.ws = new WebSocket(api.wsUrl());
    this.ws.onopen = () => {
      this.retry = 0;
      this.ws.send(JSON.stringify({ type: "hello", v: 1, token: s && s.token, table: this.code }));
    };
    this.ws.onmessage = (m) => this.receive(JSON.parse(m.data));
    this.ws.onclose = (e) => {
      if (this.closed) return;
      if (this.closedBy) { // an operator's close or freeze: no coming back (the page says why)
        this.gone = true; this.connected = false; clearInterval(this.timer); api.lastTable.set(null); this.render(); return;
      }
      if (this.escaped) { this.closed = true; clearInterval(this.timer); api.lastTable.set(null); this.render(); return; }
      if (e.code === 4401 || e.code === 4404 || e.code === 4403) { this.fail(e.reason || "refused"); return; }
      this.connected = false; this.render();
      // soon and often: a table whose process died is back within a lease (2 s); a
      // little jitter keeps a process's people from knocking all at once
      this.retry = Math.min(this.retry + 1, 4);
      setTimeout(() => !this.closed && this.connect(), 150 * this.retry * (0.75 + Math.random() / 2));
    };
  }

  send(frame) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(frame));
  }

  close() {
    this.closed = true; clearInterval(this.timer);
    document.title = "方城 Fangcheng · mahjong";
    if (this.ws) this.ws.close();
  }

  fail(why) {
    this.closed = true; clearInterval(this.timer);
    api.lastTable.set(null);
    this.root.replaceChildren(h("div", "panel", h("h2", "", "不能入座 Cannot sit at this table"), h("p", "", why),
      h("a", "button", "返回 Back to the start page")));
    this.root.querySelector("a").href = "#/";
  }

  receive(f) {
    switch (f.type) {
      case "welcome":
        this.connected = true; this.seat = f.seat; this.info = f.table; break;
      case "table":
        this.info = f.table;
        // the next hand begun before its deal (its 漂 first): the settlement closes, as at a deal
        if (this.ending && !this.matchEnd && this.handNow() !== this.ending.hand) this.showEnd = false;
        if (this.passOnly()) return; // the seat taken back at a claim window with nothing to claim
        break;
      case "events": {
        const before = f.hand === this.hand ? this.events.length : 0;
        // a reconnect brings the hand from its start: nothing of it is news
        const news = f.start === 0 && f.events.length > 3 ? [] : f.events.slice(Math.max(0, before - f.start));
        if (f.hand !== this.hand) {
          if (f.start !== 0) return; // a later part of a hand we have not begun: wait for the state
          this.hand = f.hand; this.events = []; this.escapeAsk = null;
          if (this.ending && !this.matchEnd) this.showEnd = false; // dealt: the settlement stays a click away in the log
        }
        if (f.start > this.events.length) { this.ws.close(); return; } // a gap: reconnect for the whole state
        this.events.length = Math.min(this.events.length, f.start);
        this.events.splice(f.start, f.events.length, ...f.events);
        // felt once the table shows them (the view or prompt that follows; a spectator's now)
        if (!this.news.length) this.newsFrom = this.root.querySelector(".river .tile.last")?.getBoundingClientRect();
        this.news.push(...news);
        break;
      }
      case "prompt":
        this.sendingNext = false; this.selected = null; this.advice = null; this.asking = false;
        this.prompt = f; this.obs = f.observation; this.sent = false; this.ting = false;
        this.clock(f);
        if (this.passOnly() || this.autoAnswer()) { this.flushNews(); return; }
        break;
      case "view":
        this.obs = f.observation; this.prompt = null; this.sent = false; this.advice = null; break;
      case "hint": // the expert's suggestion for the prompt asked about (docs/protocol.md, "Hints")
        if (this.hintLate === f.seq) return; // given up: its window is closing
        this.asking = false;
        if (this.prompt && f.seq === this.prompt.seq) this.advice = f;
        break;
      case "hand_end": { // a hand none of whose events came (an escape at once) shows none of the last one's
        const events = f.hand === this.hand ? [...this.events] : [];
        this.ending = { base: this.obs?.base, cap: this.info?.settings?.options?.cap, ...f, events, arrived: Date.now() };
        // calls about to be shown (the win's, felt after this redraw) or still showing:
        // the settlement waits for them; none, it opens now
        this.endDue = this.news.some((e) => feel.callOf(e)) || feel.callsLeft() > 0;
        this.showEnd = !this.endDue; this.prompt = null; break;
      }
      case "match_end":
        this.matchEnd = f; break;
      case "closed": // an operator closed the table (D92) or froze this account (D90)
        this.closedBy = f; break;
      case "error":
        if (f.code === "confirm") { // a coin table mid-hand: leaving is 逃跑 (D85)
          this.escapeAsk = f.message; // the server's next leave in this hand is the escape
          this.confirmEscape();
          return;
        }
        if (this.sendingNext && (f.code === "malformed" || f.code === "state")) {
          // a server of the first version says "ready" with a start between hands
          this.sendingNext = false;
          if (this.info?.status === "between") this.send({ type: "start", fill: "efficient" });
          return;
        }
        this.sent = false; this.asking = false;
        this.flash(`${f.code}: ${f.message}`);
        break;
      default: break;
    }
    this.render();
    if (f.type !== "events" || this.seat === null) this.flushNews();
    if (this.endDue) this.openEnd();
  }

  /** The settlement once the hand's last calls have been seen (never under them: the
   *  "胡!" over its buttons, the laid-out win over its payers), then in their place. */
  openEnd() {
    this.endDue = false;
    const end = this.ending, hand = this.handNow();
    clearTimeout(this.endTimer);
    this.endTimer = setTimeout(() => {
      if (this.ending !== end || this.handNow() !== hand) return; // the next hand begun meanwhile
      feel.clearCalls();
      this.showEnd = true;
      if (!this.closed) this.render();
      else if (this.escaped) this.root.querySelector(".table-page")?.append(this.endEl()); // the seat given up
    }, feel.callsLeft());
  }

  flushNews() {
    const news = this.news;
    this.news = [];
    if (news.length) this.feelNews(news, this.newsFrom);
  }

  flash(text) {
    this.toast = text; this.render();
    clearTimeout(this.toastTimer);
    this.toastTimer = setTimeout(() => { this.toast = ""; this.render(); }, 4000);
  }

  act(action) {
    if (!this.prompt || this.sent) return;
    this.sent = true;
    this.send({ type: "act", seq: this.prompt.seq, action });
    this.render();
  }

  /** A claim window where passing is all there is: answered at once, nothing to decide
   *  (the server holds it to the bots' pace). Never in 托管: its bot answers for the seat,
   *  and no answer of this page's may look like the person taking the seat back. */
  passOnly() {
    const p = this.prompt;
    if (!p || this.sent || this.inAuto() || p.legal.length !== 1 || p.legal[0] !== "pass") return false;
    this.act("pass");
    return true;
  }

  /** A claim window closes by itself: a hint not here 0.4 s before it ends is given up
   *  (said so), rather than shown after the window it was asked for. */
  hintWithin(p) {
    if (!p.window) return;
    clearTimeout(this.hintTimer);
    this.hintTimer = setTimeout(() => {
      if (!this.asking || this.prompt !== p) return;
      this.asking = false; this.hintLate = p.seq; this.render();
    }, Math.max(0, this.timeLeft().left - 400));
  }

  /** What a 漂 of ``n`` bets: n × 底注 from (and to) each opponent who pays or is paid a
   *  win (§3.10); 底注 is the coin table's stake (doubled in 防作弊场), 1 at a point table. */
  piaoStake(n) {
    const c = this.info?.coins;
    if (!c?.stake) return `${n} × 底注 base`;
    const stake = c.room === "anti_cheat" ? 2 * c.stake : c.stake;
    return `${n} × ${stake} = ${n * stake} 金币 coins`;
  }

  /** The auto toggles' answer to the open prompt, if one applies: sent at the bots' pace
   *  (a claim window's is held to it by the server anyway), so that how soon the seat
   *  answers tells nobody what it holds. A win is never passed: 不吃碰 passes only offers
   *  without 胡, and 自动摸切 never discards where 胡 is legal (a sichuan seat in the last
   *  four tiles, ``must_win``, is always offered the choice or takes it with 自动胡). */
  autoAnswer() {
    const p = this.prompt, t = this.toggles, obs = this.obs;
    if (!p || this.sent || this.inAuto()) return false;
    const legal = p.legal;
    let action = null;
    if (legal.includes("hu")) action = t.hu ? "hu" : null;
    else if (t.noCalls && p.window && legal.includes("pass")) action = "pass";
    else if (t.tsumogiri && !p.window && obs?.drawn && legal.includes(`discard ${obs.drawn}`)) {
      const rest = parseTiles(obs.hand);
      removeOne(rest, obs.drawn);
      if (waits(rest, { que: obs.seats[obs.seat]?.que || null }).length) action = `discard ${obs.drawn}`;
    }
    if (!action) return false;
    const pace = Math.max(300, this.info?.settings?.bot_ms ?? 0);
    setTimeout(() => { if (this.prompt === p && !this.inAuto()) this.act(action); }, p.window ? 0 : pace);
    this.render();
    return true;
  }

  setToggle(key, on) {
    this.toggles = { ...this.toggles, [key]: on };
    sessionStorage.setItem(`fangcheng.toggles.${this.code}`, JSON.stringify(this.toggles));
    if (!this.autoAnswer()) this.render();
  }

  /** The new events of the hand, felt: a discard's click, calls shown and said, a win
   *  laid out. ``from``: where the last discard lay before the redraw (a claimed tile
   *  flies from there). */
  feelNews(news, from) {
    for (const e of news) {
      if (e.type === "discard") { feel.sound("discard"); continue; }
      const c = feel.callOf(e);
      if (!c) continue;
      feel.shout(e.seat, c.words);
      feel.call(c.kind, c.words);
      if (e.type === "call" && e.source != null) {
        const meld = this.obs?.seats?.[e.seat]?.melds?.slice(-1)[0];
        feel.fly(this.lastDiscardTile(e) || meld?.tiles?.[0], from, e.seat);
      }
      if (e.type === "win") {
        const x = this.obs?.seats?.[e.seat];
        const own = e.seat === this.seat && this.obs?.hand ? this.obs.hand : x?.revealed || "";
        const melds = (x?.melds || []).map((m) => ({ tiles: parseTiles(m.tiles) }));
        const named = RULESETS[this.info?.rules || this.obs?.rules]?.fans || {};
        const fans = (e.fans || []).map((name) => (named[name] ? `${name} ${named[name][0]}` : name));
        feel.winBanner(e, this.who, parseTiles(own), melds, fans);
      }
    }
  }

  /** The tile a call took: the discard it answered (the event before it in the log). */
  lastDiscardTile(e) {
    const i = this.events.lastIndexOf(e);
    const d = i > 0 ? this.events[i - 1] : null;
    return d && d.type === "discard" ? d.tile : null;
  }

  /** The hand at the table now: the events' one, or the next begun before its deal (a
   *  rule set's 漂 comes first: a prompt with no events of its hand yet). */
  handNow() {
    return this.info?.status === "playing" ? Math.max(this.hand, this.info.hand ?? -1) : this.hand;
  }

  /** Whether my seat is in 托管 (the server's word: clicked, a timeout, or away). */
  inAuto() { return this.seat != null && Boolean(this.info?.seats?.[this.seat]?.auto); }

  // --- names and state ---------------------------------------------------------------

  /** A seat's name; ``frame``: a hand's or the match's end, whose standings name the
   *  seats as they were then (a seat emptied since, by an operator's close or a freeze,
   *  keeps its person's name there, as the stored hand does). */
  who = (s, frame = null) => {
    if (s === this.seat) return "你 You";
    const name = endName(frame, s) || this.info?.seats?.[s]?.name;
    const wind = WINDS[s].split(" ")[0];
    return name ? `${wind} ${name}` : WINDS[s];
  };

  seatsInfo(frame = null) {
    return [0, 1, 2, 3].map((s) => {
      const x = this.info?.seats?.[s] || {};
      const name = endName(frame, s) || x.name;
      return { ...x, name: s === this.seat ? `${name || "you"} (你)` : name || (x.kind ? x.kind : "空 empty") };
    });
  }

  /** The end frame of the hand on the board once it is over, else null: the board, its
   *  middle and the log name the seats as that hand had them, not as the table has them
   *  since (its match's end, or an operator's close, empties seats). */
  boardEnd() { return this.ending?.hand === this.handNow() ? this.ending : null; }

  isOwner() {
    const s = api.session();
    const o = this.info?.owner;
    return s && o != null && (o === s.name || o === s.person); // the owner's name (or, first, id)
  }

  // --- drawing -------------------------------------------------------------------------

  /** The prompt's time, counted on this machine's clock from its arrival: a deadline in
   *  the server's clock, no longer than the table's timers allow (clocks may disagree). */
  clock(f) {
    const st = this.info?.settings;
    f.window = ["claim", "rob"].includes(f.observation?.phase);
    // D84: a turn is its own time, then the bank's; a claim window has no bank
    f.bank = f.window ? 0 : Math.max(0, f.bank_ms ?? st?.bank_ms ?? 0);
    const most = st ? (f.window ? st.claim_ms : st.turn_ms + f.bank) : Infinity;
    f.arrived = Date.now();
    f.total = Math.max(1, Math.min(f.deadline - f.arrived, most ?? Infinity));
    f.bank = Math.min(f.bank, f.total);
  }

  /** The prompt's time left: the turn's own, else the bank's (shown apart, D84). */
  timeLeft() {
    const p = this.prompt;
    const left = Math.max(0, p.total - (Date.now() - p.arrived));
    const bank = Math.min(p.bank, left);
    return { left, own: left - bank, bank, ownTotal: p.total - p.bank };
  }

  tick() {
    this.dealTick();
    const el = this.root.querySelector(".countdown");
    if (!el || !this.prompt) return;
    const p = this.prompt;
    const { left, own, bank, ownTotal } = this.timeLeft();
    const inBank = own <= 0 && p.bank > 0;
    el.querySelector(".secs").textContent = `${Math.ceil((inBank ? bank : own) / 1000)}s`;
    el.querySelector(".bar i").style.width = `${inBank ? (100 * bank) / p.bank : (100 * own) / Math.max(1, ownTotal)}%`;
    const b = el.querySelector(".bank");
    if (b) b.textContent = inBank ? "时间库 time bank" : `+ 时间库 bank ${Math.ceil(bank / 1000)}s`;
    el.classList.toggle("in-bank", inBank);
    el.classList.toggle("urgent", left < 5000);
    const second = Math.ceil(left / 1000);
    if (left > 0 && left <= 5000 && !this.sent && second !== this.ticked) feel.sound("tick"); // the last 5 s
    this.ticked = second;
  }

  /** The settlement's "next hand in N s", to the deal the hand_end frame names. */
  dealTick() {
    const el = this.root.querySelector(".next-deal");
    const end = this.ending;
    if (!el || !end || end.next_deal == null) return;
    const most = this.info?.settings?.between_ms ?? Infinity;
    const left = Math.max(0, Math.min(end.next_deal - end.arrived, most) - (Date.now() - end.arrived));
    el.textContent = left > 0 ? `下一盘 ${Math.ceil(left / 1000)} 秒后发牌 · next hand in ${Math.ceil(left / 1000)} s` : "发牌中 dealing the next hand…";
  }

  render() {
    if (this.closed) return;
    const info = this.info;
    const top = h("div", "topbar",
      h("a", "home", "← 大厅 Lobby"),
      h("span", "title", [
        rulesName(info?.rules || this.obs?.rules || ""), `桌 ${this.code}`,
        info?.quan && info?.settings?.quan ? `${info.quan}/${info.settings.quan} 圈 quan` : "",
        this.handNow() >= 0 ? `第${this.handNow() + 1}盘 hand ${this.handNow() + 1}` : "",
        coinLine(info?.coins),
      ].filter(Boolean).join(" · ")),
      h("button", "link fans-button", "番表 Fans"),
      h("button", "link rules-button", "规则 Rules"),
      h("button", "link mute", feel.muted() ? "静音 muted" : "声音 sound on"),
      h("span", `conn ${this.connected ? "on" : "off"}`, this.connected ? "● 在线 online" : this.gone ? "○ 已断开 closed" : "○ 重连中 reconnecting…"));
    top.querySelector(".home").href = "#/";
    top.querySelector(".fans-button").onclick = () => { this.showFans = !this.showFans; this.render(); };
    top.querySelector(".rules-button").onclick = () => this.openRules(info?.rules || this.obs?.rules);
    top.querySelector(".mute").onclick = () => { feel.setMuted(!feel.muted()); this.render(); };
    const page = h("div", "table-page", top);
    if (this.closedBy) page.append(this.closedEl());
    const watching = this.seat === null && this.events.length > 0; // a spectator: events alone
    if (!this.obs && !watching && (!info || info.status === "waiting" || info.status === "finished")) page.append(this.waitingEl());
    else if (this.obs || watching) page.append(this.playEl());
    else page.append(h("p", "panel", "等待 waiting for the table…"));
    if (this.showEnd && this.ending) page.append(this.endEl());
    else if (this.matchEnd) page.append(this.matchEndEl());
    if (this.showFans) page.append(this.fansEl(info?.rules || this.obs?.rules));
    if (this.toast) page.append(h("div", "toast", this.toast));
    this.root.replaceChildren(page);
    document.title = this.prompt ? "● 轮到你 Your move · 方城" : `方城 ${this.code}`;
    this.tick();
  }

  /** The rule set's whole rules (docs/rules), over the table until closed. */
  async openRules(rules) {
    const close = h("button", "primary close-rules", "关闭 Close");
    const panel = h("div", "settlement rules-overlay", h("div", "row", h("h2", "", `规则 Rules · ${rulesName(rules)}`), close));
    const overlay = h("div", "overlay rules-layer", panel);
    close.onclick = () => overlay.remove();
    document.body.append(overlay); // outside the table's redraws
    panel.append(await rulesEl(rules));
  }

  /** The rule set's fans: what a hand can score, with the caps. */
  fansEl(rules) {
    const r = RULESETS[rules];
    const panel = h("div", "settlement fan-table", h("h2", "", `番表 Fans · ${rulesName(rules)}`));
    if (!r) return h("div", "overlay", panel);
    const caps = [r.cap_fans != null ? `封顶 capped at ${r.cap_fans} 番` : "", r.cap_base != null ? `封顶 capped at ${r.cap_base} × 底注` : ""].filter(Boolean);
    panel.append(h("p", "note", `每家付 each payer pays 底注 × 2^N, N = the fans that apply${caps.length ? " · " + caps.join(" · ") : ""}`));
    const table = h("table", "fans");
    for (const [name, [en, value, why]] of Object.entries(r.fans)) {
      table.append(h("tr", "", h("td", "fan-cn", name), h("td", "fan-en", en), h("td", "num", `${value} 番`), h("td", "note", plainWhy(why))));
    }
    const close = h("button", "primary", "关闭 Close");
    close.onclick = () => { this.showFans = false; this.render(); };
    panel.append(table, h("div", "row", close));
    return h("div", "overlay", panel);
  }

  waitingEl() {
    const info = this.info || { seats: [] };
    const box = h("div", "panel waiting");
    box.append(h("h2", "", "等人 Waiting for players"),
      h("p", "", "把桌号发给朋友 Share this code with your friends:"),
      h("div", "code", this.code),
      h("p", "note", "或者发链接 or send the link: ", h("code", "share", `${location.origin}/#/join/${this.code}`)));
    const list = h("ol", "seats");
    info.seats.forEach((x, s) => list.append(h("li", "", `${WINDS[s]} · ${x.name || "空位 empty seat"}${x.kind === "bot" ? " 🤖" : ""}${x.kind && x.connected === false ? " (offline)" : ""}`)));
    box.append(list);
    if (info.coins) { // quick match: the server starts the table (D82, D83)
      box.querySelectorAll("p, .code").forEach((el) => el.remove());
      box.append(h("p", "note coin-wait", info.coins.room === "anti_cheat"
        ? "防作弊场 匹配中 matching: four people, no bots"
        : "匹配中 matching: 15 秒后机器人补位 house bots take the empty seats after the wait"));
    } else if (this.isOwner() || info.owner == null) {
      const fill = h("select", "fill");
      for (const [v, label] of BOT_LEVELS) {
        const o = h("option", "", label); o.value = v; fill.append(o);
      }
      const start = h("button", "primary start-table", "开始 Start (bots fill empty seats)");
      start.onclick = () => this.send({ type: "start", fill: fill.value });
      box.append(h("div", "row", fill, start));
    } else box.append(h("p", "note", "等房主开始 The owner starts the table."));
    const leave = h("button", "leave", "离开 Leave");
    leave.onclick = () => this.leave();
    box.append(leave);
    return box;
  }

  playEl() {
    const end = this.boardEnd(), who = (s) => this.who(s, end);
    const model = this.obs ? fromObservation(this.obs, this.seatsInfo(end)) : fromEvents(this.events, this.seatsInfo(end), 0);
    const obs = this.obs || { phase: "turn", turn: model.turn, last_discard: model.lastDiscard, rules: this.info?.rules };
    if (this.info?.seats) {
      model.seats.forEach((x, s) => Object.assign(x, {
        auto: this.info.seats[s]?.auto, connected: this.info.seats[s]?.connected, kind: this.info.seats[s]?.kind,
        total: this.info.scores && this.hand > 0 ? this.info.scores[s] : null, // the match so far, from the second hand on
      }));
    }
    const legal = this.prompt && !this.inAuto() ? this.prompt.legal : [];
    const discards = new Set(legal.filter((a) => a.startsWith("discard ")).map((a) => a.split(" ")[1]));
    const tings = new Set(legal.filter((a) => a.startsWith("ting ")).map((a) => a.split(" ")[1]));
    const playable = this.ting ? tings : discards;
    // a touch screen raises the tile on the first tap and discards it on the second
    const touch = window.matchMedia("(pointer: coarse)").matches;
    const onTile = (t) => {
      if (touch && this.selected !== t) { this.selected = t; this.render(); return; }
      this.selected = null;
      this.act(`${this.ting ? "ting" : "discard"} ${t}`);
    };
    const center = h("div", "center-info");
    center.append(centerEl(model));
    center.append(h("div", "phase", phaseText(obs, who)));
    if (obs.last_discard) center.append(h("div", "last", `${who(obs.last_discard[0])} 打 `, tileEl(obs.last_discard[1], { size: "small" })));
    const inPlay = this.obs && this.obs.hand && !['piao', 'end'].includes(this.obs.phase);
    const aids = this.aidsOn() && inPlay ? this.aidsOf(this.obs, playable) : null;
    const ld = model.lastDiscard;
    const key = ld ? `${this.hand}:${ld[0]}:${model.seats[ld[0]].river.length}` : "";
    const fresh = key !== this.lastKey; // the discard drops in once, not on every redraw
    this.lastKey = key;
    const board = boardEl(model, {
      fresh,
      center, onTile: this.sent || this.inAuto() ? null : onTile, playable: this.sent ? new Set() : playable,
      highlight: aids ? new Set(Object.keys(aids.after)) : null,
    });
    const advised = this.advice && adviceTile(this.advice.action);
    if (advised) { // the suggested discard: the last of its face (the drawn tile, if it is one)
      const els = board.querySelectorAll(`.hand.mine .tile[data-tile="${advised}"]`);
      if (els.length) els[els.length - 1].classList.add("advised");
    }
    const panel = aids ? this.aidsEl(aids) : inPlay ? this.aidsOffEl() : null;
    if (touch && this.selected && playable.has(this.selected)) {
      const el = board.querySelector(`.hand.mine .tile.playable[data-tile="${this.selected}"]`);
      if (el) el.classList.add("selected");
      if (aids && panel) this.showAid(panel, aids, this.selected);
    }
    if (aids) {
      board.querySelectorAll(".hand.mine .tile.playable").forEach((el) => {
        el.onmouseenter = () => this.showAid(panel, aids, el.dataset.tile);
        el.onmouseleave = () => this.showAid(panel, aids, null);
      });
    }
    const wrap = h("div", "play", h("div", "main", board, this.actionsEl(legal, tings), this.togglesEl(), panel), this.logEl());
    return wrap;
  }

  /** The auto toggles of my seat, shown on the table (none for a spectator). */
  togglesEl() {
    if (this.seat == null) return null;
    const row = h("div", "toggles");
    for (const [key, label, why] of TOGGLES) {
      const b = h("button", `toggle toggle-${key}${this.toggles[key] ? " on" : ""}`, `${this.toggles[key] ? "☑" : "☐"} ${label}`);
      b.title = why;
      b.setAttribute("aria-pressed", String(Boolean(this.toggles[key])));
      b.onclick = () => this.setToggle(key, !this.toggles[key]);
      row.append(b);
    }
    return row;
  }

  aidsOn() { return localStorage.getItem("fangcheng.aids") !== "off" && this.info?.aids !== false; }

  /** My waits now (a hand of 3k+1), and after each discard that leaves the hand ready. */
  aidsOf(obs, playable) {
    const hand = parseTiles(obs.hand);
    const que = obs.seats[obs.seat]?.que || null;
    const left = unseen(obs);
    const after = {};
    if (hand.length % 3 === 2) {
      for (const t of playable) {
        const rest = [...hand]; removeOne(rest, t);
        const w = waits(rest, { que });
        if (w.length) after[t] = w;
      }
    }
    return { now: hand.length % 3 === 1 ? waits(hand, { que }) : [], after, left };
  }

  aidsEl(aids) {
    const panel = h("div", "aids");
    const toggle = h("button", "link aids-off", "关闭提示 hide aids");
    toggle.onclick = () => { localStorage.setItem("fangcheng.aids", "off"); this.render(); };
    panel.append(h("span", "aid-text", ""), toggle);
    this.showAid(panel, aids, null);
    return panel;
  }

  aidsOffEl() {
    const on = h("button", "link aids-on", "显示提示 show aids (waits 听牌)");
    on.onclick = () => { localStorage.removeItem("fangcheng.aids"); this.render(); };
    return h("div", "aids off", on);
  }

  showAid(panel, aids, tile) {
    const text = panel.querySelector(".aid-text");
    const list = (ws) => {
      const row = h("span", "waits");
      for (const t of ws) row.append(h("span", "wait", tileEl(t, { size: "tiny" }), h("small", "", `×${aids.left[t]}`)));
      const total = ws.reduce((a, t) => a + aids.left[t], 0);
      row.append(h("small", "note", ` ${total} 张未见 unseen`));
      return row;
    };
    let body;
    if (tile && aids.after[tile]) body = [h("span", "", "打 "), tileEl(tile, { size: "tiny" }), h("span", "", " → 听 waits "), list(aids.after[tile])];
    else if (aids.now.length) body = [h("span", "", "听 waits (牌型 shape) "), list(aids.now)];
    else if (Object.keys(aids.after).length) body = [h("span", "note", "蓝框的牌打出后听牌 discarding a tile framed blue leaves you ready — hover it")];
    else body = [h("span", "note", "未听 not ready yet")];
    text.replaceChildren(...body);
  }

  actionsEl(legal, tings) {
    const bar = h("div", "actions");
    if (this.escaped) { // the seat is given up: nothing more to do here
      bar.append(h("span", "hint", "你已离桌 you left the table (逃跑)"));
      return bar;
    }
    const me = this.seat != null ? this.info?.seats?.[this.seat] : null;
    if (me) { // 托管: the efficient bot plays for me until I act or take it back (D84)
      const auto = h("button", `auto ${me.auto ? "on" : ""}`, me.auto ? "取消托管 Take back my seat" : "托管 Let a bot play");
      auto.onclick = () => this.send({ type: "auto", on: !me.auto });
      bar.append(auto);
      if (this.info?.coins) { // a coin table: leaving mid-hand is 逃跑, asked first (D85); between hands it is not
        const live = this.info.status === "playing" && this.obs?.phase !== "end";
        const leave = h("button", live ? "leave escape" : "leave", live ? "离开 Leave (逃跑)" : "离开 Leave");
        leave.onclick = () => this.leave();
        bar.append(leave);
      }
      if (me.auto) { // its bot answers every prompt; nothing here answers for the person
        bar.append(h("span", "hint auto-note", "托管中 a bot plays for you · 取消托管 to play again"));
        return bar;
      }
    }
    if (!this.prompt) {
      const text = this.seat === null ? "旁观 watching: the public view" : this.obs?.phase === "end" ? "本盘结束 hand over" : "等待 waiting for the others…";
      bar.append(h("span", "hint", text));
      return bar;
    }
    const p = this.prompt;
    const cd = h("span", `countdown ${p.window ? "window" : "turn"}`, h("span", "secs", ""), h("span", "bar", h("i", "")));
    if (p.bank) cd.append(h("span", "bank", ""));
    bar.append(cd);
    if (p.must_win) bar.append(h("div", "must-win", "⚠ 花猪 warning: passing this win makes you a 花猪 flower pig (the last four tiles)"));
    const buttons = h("span", "buttons");
    const others = legal.filter((a) => !a.startsWith("discard ") && !a.startsWith("ting "));
    if (legal.some((a) => a.startsWith("discard "))) {
      bar.append(h("span", "hint", this.ting ? "报听: 选一张打出 click the tile to discard with 报听" : "点牌出牌 click a tile to discard"));
    }
    if (tings.size) {
      const b = h("button", `ting ${this.ting ? "on" : ""}`, this.ting ? "取消报听 Cancel 报听" : "报听 Declare ready");
      b.onclick = () => { this.ting = !this.ting; this.render(); };
      buttons.append(b);
    }
    if (this.info?.settings?.hints && this.seat !== null && !me?.auto) {
      // 提示: the expert bot's suggestion, asked once per prompt (the server keeps it)
      const ask = h("button", "link advise", this.asking ? "思考中 thinking…" : "提示 Hint");
      ask.disabled = this.asking || this.sent || Boolean(this.advice);
      ask.onclick = () => { this.asking = true; this.send({ type: "hint", seq: p.seq }); this.hintWithin(p); this.render(); };
      buttons.append(ask);
      if (this.hintLate === p.seq) buttons.append(h("span", "hint hint-late", "来不及 no hint before the window closes"));
    }
    for (const a of others) {
      const kind = a.split(" ")[0];
      const b = h("button", `act act-${kind}${this.advice?.action === a ? " advised" : ""}`, actionLabel(a));
      b.dataset.action = a;
      const tiles = actionTiles(a);
      if (tiles.length) b.append(tilesEl(tiles, { size: "tiny" }));
      if (kind === "piao" && a !== "piao 0") b.append(h("span", "piao-coins", this.piaoStake(Number(a.split(" ")[1]))));
      b.disabled = this.sent;
      b.onclick = () => this.act(a);
      buttons.append(b);
    }
    bar.append(buttons);
    if (this.advice) {
      const a = this.advice.action;
      const tile = adviceTile(a);
      bar.append(h("div", "advice",
        h("b", "", "提示 hint: "), h("span", "advice-action", actionLabel(a)),
        ...(tile ? [" ", tileEl(tile, { size: "tiny" })] : []),
        h("span", "advice-why", this.advice.why ? ` · ${this.advice.why}` : "")));
    }
    return bar;
  }

  logEl() {
    const log = h("div", "log", h("h3", "", "记录 Log"));
    if (this.ending && !this.showEnd) { // the last settlement, closed by the deal or by hand
      const again = h("button", "link last-end", `第${this.ending.hand + 1}盘结算 hand ${this.ending.hand + 1}'s settlement`);
      again.onclick = () => { this.showEnd = true; this.render(); };
      log.append(again);
    }
    const list = h("ol", ""), end = this.boardEnd();
    for (const e of this.events) {
      const line = eventLine(e, (s) => this.who(s, end), this.hand);
      if (line) list.append(h("li", `ev-${e.type}`, line));
    }
    log.append(list);
    queueMicrotask(() => { list.scrollTop = list.scrollHeight; });
    return log;
  }

  endEl() {
    const end = this.ending;
    const model = fromEvents(end.events, this.seatsInfo(end), this.seat ?? 0);
    const panel = settlementEl(end, end.events, model, (s) => this.who(s, end), this.info?.rules || this.obs?.rules);
    if (this.closedBy) panel.prepend(this.closedEl());
    if (end.coins) panel.append(coinsEl(end.coins, this.seat, this.info?.coins));
    // the countdown and the buttons kept in view at the panel's foot, however long the
    // settlement (a phone's 血战 of three wins; issue 41)
    const foot = h("div", "settle-foot");
    const buttons = h("div", "row");
    if (this.matchEnd) {
      buttons.append(this.standingsEl());
      if (this.closedBy) buttons.append(h("span", "note", "没有下一局 no next match: the table is closed"));
      else if (this.info?.coins) buttons.append(this.matchAgainEl());
      else if (this.isOwner()) {
        const again = h("button", "primary again", "再来一局 Play again");
        again.onclick = () => { this.showEnd = false; this.matchEnd = null; this.ending = null; this.obs = null; this.send({ type: "start", fill: "efficient" }); };
        buttons.append(again);
      }
    } else if (end.hand !== this.handNow()) { // reopened from the log while the next hand is played
      const close = h("button", "primary close-end", "关闭 Close");
      close.onclick = () => { this.showEnd = false; this.render(); };
      buttons.append(close);
    } else if (!this.escaped && this.readyTable()) {
      if (end.next_deal != null) foot.append(h("p", "next-deal", ""));
      buttons.append(this.readyEl());
    } else if (!this.escaped && !this.closedBy) {
      if (end.next_deal != null) foot.append(h("p", "next-deal", ""));
      // ready for the next hand (托管 stays as it is: only its own button ends it)
      const next = h("button", "primary next", "下一盘 Next hand →");
      next.onclick = () => {
        // between hands, a start says "ready for the next" (the deal waits for everyone, or the pause)
        if (this.info?.status === "between") { this.sendingNext = true; this.send({ type: "next" }); }
        this.showEnd = false; this.render();
      };
      buttons.append(next);
    }
    if (this.inAuto() && !this.matchEnd) { // 托管 goes on into the next hand until taken back here
      const back = h("button", "take-back", "取消托管 Take back my seat");
      back.onclick = () => this.send({ type: "auto", on: false });
      buttons.append(back);
    }
    if (end.record != null) {
      const rec = h("a", "button", "回放 Replay this hand");
      rec.href = `#/replay/${end.record}/${this.seat ?? 0}`;
      buttons.append(rec);
    }
    const leave = h("button", "leave", "离开 Leave");
    leave.onclick = () => this.leave();
    buttons.append(leave);
    foot.append(buttons);
    panel.append(foot);
    return h("div", "overlay", panel);
  }

  /** What an operator did, in their words: closed the table (the hand abandoned, no
   *  逃跑), or froze this account (托管 plays the hand out, then the seat is left). */
  closedEl() {
    const f = this.closedBy;
    const what = f.what === "account"
      ? "你的账户已被运营冻结 Your account was frozen by an operator — 托管 plays this hand to its end, then the seat is left (no 逃跑)"
      : "牌桌已被运营关闭 This table was closed by an operator — the hand is abandoned: no win payments, no fees, no 逃跑";
    return h("div", `panel closed-note closed-${f.what}`, h("b", "", what), h("p", "reason", `原因 Reason: ${f.reason || "—"}`));
  }

  /** A private table of people between hands: each says when ready (all ready: dealt at once). */
  readyTable() {
    const info = this.info;
    return info && !info.coins && !info.practice && info.status === "between"
      && info.seats.filter((x) => x.kind === "person").length > 1;
  }

  readyEl() {
    const seats = this.info.seats;
    const mine = seats[this.seat]?.ready;
    const toggle = h("button", `primary ready-toggle${mine ? " on" : ""}`, mine ? "☑ 已准备 Ready — 取消 undo" : "☐ 准备 Ready for the next hand");
    toggle.onclick = () => this.send({ type: "next", on: !mine });
    const who = seats.map((x, s) => (x.kind === "person" ? `${this.who(s)} ${x.ready ? "✓" : "…"}` : null)).filter(Boolean);
    return h("span", "ready-row", toggle, h("span", "note ready-list", `准备 ready: ${who.join(" · ")}`));
  }

  standingsEl() {
    const scores = standingsOf(this.matchEnd.standings);
    const order = [0, 1, 2, 3].sort((a, b) => scores[b] - scores[a]);
    const list = h("ol", "standings");
    for (const s of order) list.append(h("li", s === this.seat ? "me" : "", `${this.who(s, this.matchEnd)} ${scores[s] > 0 ? "+" : ""}${scores[s]}`));
    return h("div", "final", h("h3", "", "终局 Final standings"), list);
  }

  /** A coin table's match is over: quick-match again in the same room. */
  matchAgainEl() {
    const again = h("button", "primary again match-again", "再匹配 Quick match again");
    again.onclick = async () => {
      try {
        const t = await api.quickMatch(this.info.coins.room);
        this.close(); api.lastTable.set(t.code); location.hash = `#/t/${t.code}`;
      } catch (x) { this.flash(`${x.code}: ${x.message}`); }
    };
    return again;
  }

  matchEndEl() {
    const panel = h("div", "settlement", h("h2", "", "终局 The match is over"), this.standingsEl());
    if (this.closedBy) panel.prepend(this.closedEl());
    const row = h("div", "row");
    if (this.info?.coins) row.append(this.matchAgainEl());
    else if (this.isOwner() && !this.closedBy) {
      const again = h("button", "primary again", "再来一局 Play again");
      again.onclick = () => { this.matchEnd = null; this.obs = null; this.send({ type: "start", fill: "efficient" }); };
      row.append(again);
    }
    const leave = h("button", "leave", "离开 Leave");
    leave.onclick = () => this.leave();
    row.append(leave);
    panel.append(row);
    return h("div", "overlay", panel);
  }

  confirmEscape() {
    // the server's words end in how to confirm by the protocol; here the dialog asks
    const cost = this.escapeAsk.replace(/;?\s*leave again to confirm\.?$/, "");
    if (window.confirm(`逃跑 Escape now? ${cost}.\n确定 OK: leave and pay · 取消 Cancel: stay and play`)) {
      this.escaped = true; this.send({ type: "leave" });
    }
  }

  leave() {
    // at a coin table during a hand the server asks first (an "error" of code "confirm")
    if (this.info?.coins && this.info.status === "playing" && !this.escaped) {
      if (this.escapeAsk) this.confirmEscape(); else this.send({ type: "leave" });
      return;
    }
    this.send({ type: "leave" });
    api.lastTable.set(null);
    this.close();
    location.hash = "#/";
  }
}

/** A coin hand's coins: the room and its fee rate, the stake (doubled in 防作弊场, §3.7),
 *  my fee and coins, my new balance (the ledger's) and the hand's id (the profile's). */
function coinsEl(coins, seat, room) {
  if (coins.error) return h("p", "error coins", `金币未结算 coins not settled: ${coins.error}`);
  const me = seat ?? 0;
  const sign = (n) => `${n > 0 ? "+" : ""}${n}`;
  const anti = coins.room === "anti_cheat";
  const stake = h("b", "stake", String(anti ? 2 * coins.stake : coins.stake));
  return h("div", "coins",
    h("p", "", h("span", "room", `${room?.chinese ?? coins.room} · 台费 fee ${room?.fee_percent ?? "?"}%`),
      " · 底注 stake ", stake, anti ? ` (${coins.stake} × 2 防作弊场)` : ""),
    h("p", "", "台费 my fee ", h("b", "fee", String(coins.fees[me])),
      " · 金币 coins ", h("b", "coin-total", sign(coins.total[me])),
      " · 余额 new balance ", h("b", "balance", String(coins.balances[me]))),
    h("p", "note", "盘号 hand ", h("span", "hand-id", coins.hand)));
}

/** A coin table's room, 底注 (doubled in 防作弊场, §3.7) and fee rate, for the top bar. */
function coinLine(coins) {
  if (!coins) return "";
  const stake = coins.stake == null ? "" : ` · 底注 ${coins.room === "anti_cheat" ? 2 * coins.stake : coins.stake}`;
  return `${coins.chinese}${stake} · 台费 ${coins.fee_percent}%`;
}

/** A seat's name as an end frame's standings give it (rows ``{seat, name}``), or null. */
function endName(frame, s) {
  const rows = Array.isArray(frame?.standings) ? frame.standings : [];
  return rows.find((r) => r?.seat === s)?.name || null;
}

function phaseText(obs, who) {
  switch (obs.phase) {
    case "piao": return "漂 bets before the deal";
    case "que": return "定缺 choose the suit to void";
    case "claim": return "叫牌 calls on the discard";
    case "rob": return "抢杠 the kong may be robbed";
    case "fenzhang": return "分张 the last tiles";
    case "end": return "本盘结束 hand over";
    default: return `${who(obs.turn)} 出牌 to play`;
  }
}


// The web client's pages, by the address's hash: #/ (start), #/t/CODE (a table),
// #/hands (my hands), #/replay/ID (one hand step by step).
import * as api from "./api.js";
import { h } from "./board.js";
import { accountBar, accountForm, leadersPage, profilePage, roomsPanel } from "./coins.js";
import { field, input } from "./forms.js";
import { replayPage } from "./replay.js";
import { rulesPage } from "./rulespage.js";
import { BOT_LEVELS, TableView } from "./table.js";
import { ROOMS, RULES, WINDS, rulesName } from "./text.js";
import { tilesEl } from "./tiles.js";

const root = document.getElementById("app");
let current = null; // the open TableView

function rulesSelect(value = "sichuan") {
  const sel = h("select", "rules");
  for (const [k, v] of Object.entries(RULES)) { const o = h("option", "", v); o.value = k; o.selected = k === value; sel.append(o); }
  return sel;
}

function errorBox() { return h("p", "error", ""); }
const report = (box, e) => {
  if (e.status === 401) { route(); return; } // the session is gone (the server forgot it): ask for a name again
  box.textContent = `${e.code || ""} ${e.message || e}`.trim();
};

async function goTable(code) {
  api.lastTable.set(code);
  location.hash = `#/t/${code}`;
}

function namePage() {
  const name = input("text", "", { placeholder: "你的名字 your name", maxLength: 24, required: true, name: "name" });
  const err = errorBox();
  const form = h("form", "panel login",
    h("h1", "", "方城 Fangcheng"),
    h("p", "lead", "白山 · 白城 · 四川 麻将 — mahjong of Baishan, Baicheng and Sichuan"),
    tilesEl(["1m", "5p", "9s", "E", "C", "F", "P"], { size: "big" }),
    field("名字 Name", name), h("button", "primary", "进入 Enter"), err);
  form.onsubmit = async (e) => {
    e.preventDefault();
    try { await api.login(name.value.trim() || "guest"); route(); } catch (x) { report(err, x); }
  };
  root.replaceChildren(form, accountForm(route));
  name.focus();
}

async function startPage() {
  const s = api.session();
  if (!s) return namePage();
  const err = errorBox();
  const page = h("div", "start");
  const out = h("button", "link", "换名字 change name");
  out.onclick = () => { api.forget(); route(); };
  page.append(h("header", "hello", h("h1", "", "方城 Fangcheng"), h("span", "", `你好 Hello, ${s.name} `), out,
    h("a", "button hands-link", "我的牌局 My hands"), h("a", "button rules-link", "规则 Rules")));
  page.querySelector(".hands-link").href = "#/hands";
  page.querySelector(".rules-link").href = "#/rules/sichuan";
  if (s.account) {
    page.querySelector("header").append(await accountBar(err));
    page.append(await roomsPanel(err, goTable).catch((x) => h("p", "error", x.message)));
  }
  const last = api.lastTable.get();
  if (last) {
    const back = h("a", "button primary", `回到桌 ${last} Return to your table`);
    back.href = `#/t/${last}`;
    page.append(h("div", "panel back", back));
  }

  // quick practice: one person and three bots, at once
  const quick = h("div", "panel quick", h("h2", "", "练习 Quick practice"), h("p", "note", "你和三个机器人 You and three bots, started at once"));
  const row = h("div", "row");
  const level = h("select", "practice-bot");
  for (const [v, label] of BOT_LEVELS) {
    const o = h("option", "", label); o.value = v; o.selected = v === "strong"; level.append(o);
  }
  for (const [k, v] of Object.entries(RULES)) {
    const b = h("button", `primary practice practice-${k}`, v);
    b.onclick = async () => { try { const r = await api.practice(k, level.value); goTable(r.code); } catch (x) { report(err, x); } };
    row.append(b);
  }
  quick.append(field("对手 Bots", level), row);

  // join by code
  const code = input("text", "", { placeholder: "K7QF2M", maxLength: 6, name: "code" });
  code.oninput = () => { code.value = code.value.toUpperCase(); };
  const spectate = input("checkbox", false, { name: "spectate" });
  const joinForm = h("form", "panel join", h("h2", "", "加入 Join a table"), field("桌号 Code", code),
    field("旁观 Watch only", spectate), h("button", "primary", "加入 Join"));
  joinForm.onsubmit = async (e) => {
    e.preventDefault();
    try { await api.join(code.value.trim(), spectate.checked); goTable(code.value.trim()); } catch (x) { report(err, x); }
  };

  // a private table
  const rules = rulesSelect();
  const quan = input("number", 1, { min: 1, max: 16, name: "quan" });
  const claim = input("number", "", { min: 0.5, max: 60, step: 0.5, name: "claim", placeholder: "规则默认 the rules' own" });
  const turn = input("number", 10, { min: 1, max: 120, name: "turn" });
  const bank = input("number", 20, { min: 0, max: 600, name: "bank" });
  const bots = input("checkbox", true), outside = input("checkbox", false);
  const spect = input("checkbox", true), pub = input("checkbox", true);
  const cap = input("number", "", { min: 1, max: 1000, name: "cap", placeholder: "规则默认 the rules' own" });
  const room = h("select", "room");
  for (const [v, label] of Object.entries(ROOMS)) { const o = h("option", "", label); o.value = v; room.append(o); }
  const roomField = field("场 Room", room);
  const capField = field("封顶 Cap", cap);
  const showRules = () => {
    roomField.hidden = rules.value !== "baishan_platform";
    capField.hidden = !["sichuan", "baishan_platform"].includes(rules.value);
    capField.querySelector("span").textContent = rules.value === "sichuan" ? "封顶 Cap (fans 番)" : "封顶 Cap (× 底注 base)";
  };
  rules.onchange = showRules;
  showRules();
  const open = h("form", "panel open", h("h2", "", "开桌 Open a private table"),
    field("规则 Rules", rules), field("圈 Rounds (quan)", quan), roomField, capField,
    field("叫牌时限 Claim window (s)", claim), field("出牌时限 Turn (s)", turn), field("时间库 Time bank (s)", bank),
    field("机器人 Bots allowed", bots), field("外部机器人 Outside bots", outside),
    field("旁观 Spectators", spect), field("大厅可见 Listed in the lobby", pub),
    h("button", "primary", "开桌 Open"));
  open.onsubmit = async (e) => {
    e.preventDefault();
    try {
      const settings = {
        rules: rules.value, quan: Number(quan.value),
        turn_ms: Math.round(turn.value * 1000), bank_ms: Math.round(bank.value * 1000),
        bots: bots.checked, outside_bots: outside.checked, spectators: spect.checked, public: pub.checked,
      };
      if (claim.value) settings.claim_ms = Math.round(claim.value * 1000);
      const options = {};
      if (!capField.hidden && cap.value) options.cap = Number(cap.value);
      if (!roomField.hidden) options.room = room.value;
      if (Object.keys(options).length) settings.options = options;
      const r = await api.openTable(settings);
      goTable(r.code);
    } catch (x) { report(err, x); }
  };

  // the lobby
  const lobby = h("div", "panel lobby", h("h2", "", "大厅 Lobby"));
  const list = h("ul", "tables");
  const refresh = h("button", "link", "刷新 refresh");
  lobby.append(refresh, list);
  const load = async () => {
    try {
      const { tables } = await api.lobby();
      list.replaceChildren(...(tables.length ? tables.map(lobbyRow) : [h("li", "note", "没有空桌 no open tables — open one!")]));
    } catch (x) { report(err, x); }
  };
  refresh.onclick = load;
  const every = setInterval(() => (document.body.contains(list) ? load() : clearInterval(every)), 5000);
  page.append(quick, h("div", "cols", joinForm, lobby), open, err);
  root.replaceChildren(page);
  load();
}

function lobbyRow(t) {
  const seated = t.seats.filter((x) => x.kind).length;
  const b = h("button", "join-table", "加入 Join");
  b.onclick = async () => { await api.join(t.code, false); goTable(t.code); };
  const w = h("button", "link", "旁观 watch");
  w.onclick = async () => { await api.join(t.code, true); goTable(t.code); };
  return h("li", "", h("b", "", t.code), ` ${rulesName(t.rules)} · ${seated}/4 · ${t.status} · ${t.seats.map((x) => x.name || "—").join(", ")} `, b, w);
}

/** A shared link: sit at the table (or watch, once it has started), then open it. */
async function joinPage(code) {
  try {
    await api.join(code, false);
  } catch (x) {
    if (x.code !== "state") { root.replaceChildren(h("p", "panel error", `${x.code}: ${x.message}`)); return; }
    await api.join(code, true).catch(() => {});
  }
  goTable(code);
}

/** A finished time (ms or seconds since the epoch, or ISO text) in the reader's own clock. */
function when(t) {
  if (t == null) return "";
  const d = typeof t === "number" ? new Date(t < 1e12 ? t * 1000 : t) : new Date(t);
  return Number.isNaN(d.getTime()) ? String(t) : d.toLocaleString();
}

async function handsPage() {
  const page = h("div", "panel hands", h("a", "home", "← 大厅 Lobby"), h("h2", "", "我的牌局 My hands"));
  page.querySelector(".home").href = "#/";
  root.replaceChildren(page);
  try {
    const { hands } = await api.hands();
    const table = h("table", "list");
    table.append(h("tr", "", ...["#", "时间 when", "桌 table", "盘 hand", "规则 rules", "座 seat", "得分 total", ""].map((x) => h("th", "", x))));
    for (const x of hands) {
      const a = h("a", "button replay", "回放 Replay"); a.href = `#/replay/${x.id}/${x.seat}`;
      table.append(h("tr", "", h("td", "", String(x.id)), h("td", "", when(x.finished)), h("td", "", x.table), h("td", "", String(x.hand + 1)),
        h("td", "", rulesName(x.rules)), h("td", "", WINDS[x.seat] ?? String(x.seat)),
        h("td", `num ${x.total > 0 ? "up" : x.total < 0 ? "down" : ""}`, String(x.total)), h("td", "", a)));
    }
    page.append(hands.length ? h("div", "scroll", table) : h("p", "note", "还没有 No finished hands yet."));
  } catch (x) { page.append(h("p", "error", x.message)); }
}

function route() {
  const hash = location.hash || "#/";
  if (current) { current.close(); current = null; }
  const [, page, arg, extra] = hash.split("/");
  if (!api.session() && page !== "" && page !== "rules") return namePage();
  if (page === "t" && arg) current = new TableView(root, arg.toUpperCase());
  else if (page === "join" && arg) joinPage(arg.toUpperCase());
  else if (page === "hands") handsPage();
  else if (page === "profile") profilePage(root);
  else if (page === "leaders") leadersPage(root);
  else if (page === "replay" && arg) replayPage(root, arg, extra);
  else if (page === "rules") rulesPage(root, arg);
  else startPage();
}

window.addEventListener("hashchange", route);
route();

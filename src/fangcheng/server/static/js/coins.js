// The coin platform's pages: sign up / log in, the header's balance and title, quick
// match per room, the profile and the leaderboard (docs/protocol.md, accounts).
import * as api from "./api.js";
import { h } from "./board.js";
import { field, input } from "./forms.js";

/** Sign up (2,000 coins) or log in with a name and a password. */
export function accountForm(done) {
  const name = input("text", "", { name: "account-name", placeholder: "名字 name", required: true });
  const password = input("password", "", { name: "password", placeholder: "密码 password (8+)", required: true });
  const err = h("p", "error", "");
  const signUp = h("button", "primary sign-up", "注册 Sign up"), logIn = h("button", "log-in", "登录 Log in");
  const form = h("form", "panel account", h("h2", "", "金币场 Coin tables: an account"),
    h("p", "note", "注册送 2,000 金币（同一网络地址每天限前 3 个账号）— sign up and get 2,000 coins (the first three accounts a day from one network address)"),
    field("名字 Name", name), field("密码 Password", password), h("div", "row", signUp, logIn), err);
  let which = true;
  signUp.onclick = () => { which = true; };
  logIn.onclick = () => { which = false; };
  form.onsubmit = async (e) => {
    e.preventDefault();
    try { await api.account(name.value.trim(), password.value, which); done(); } catch (x) { err.textContent = `${x.code}: ${x.message}`; }
  };
  return form;
}

/** The header's balance and title (an account only). */
export async function accountBar(err) {
  const bar = h("span", "account-bar", "");
  try {
    const p = await api.profile();
    const me = h("a", "profile-link", `${p.title} · 余额 `, h("b", "balance", String(p.balance)), " 金币 coins");
    me.href = "#/profile";
    const out = h("button", "link log-out", "退出 log out");
    const all = h("button", "link log-out-all", "所有设备 everywhere");
    const leave = (everywhere) => async () => { await api.logOut(everywhere).catch(() => {}); location.hash = "#/"; location.reload(); };
    out.onclick = leave(false);
    all.onclick = leave(true);
    bar.append(me, " ", out, all);
  } catch (x) { err.textContent = x.message; }
  return bar;
}

/** Quick match into each room (D82, D83). */
export async function roomsPanel(err, goTable) {
  const panel = h("div", "panel rooms", h("h2", "", "金币场 Coin rooms"),
    h("p", "note", "快速匹配 quick match: 15 秒后机器人补位 house bots fill the seats after 15 s (not in 防作弊场)"));
  const row = h("div", "row");
  const { rooms } = await api.rooms();
  for (const r of rooms) {
    const b = h("button", `primary match match-${r.room}`, `${r.chinese} · 台费 ${r.fee_percent}%`);
    b.onclick = async () => { try { const t = await api.quickMatch(r.room); goTable(t.code); } catch (x) { err.textContent = `${x.code}: ${x.message}`; } };
    row.append(b);
  }
  const relief = h("button", "link relief", "领取救济 claim relief (below 100)");
  relief.onclick = async () => { try { await api.relief(); location.reload(); } catch (x) { err.textContent = x.message; } };
  const board = h("a", "button leaders-link", "排行榜 Leaderboard"); board.href = "#/leaders";
  panel.append(row, h("div", "row", relief, board));
  return panel;
}

export async function profilePage(root) {
  const page = h("div", "panel profile", h("a", "home", "← 大厅 Lobby"), h("h2", "", "我的资料 Profile"));
  page.querySelector(".home").href = "#/";
  root.replaceChildren(page);
  try {
    const [p, { rooms }, { hands }] = await Promise.all([api.profile(), api.rooms(), api.hands().catch(() => ({ hands: [] }))]);
    const roomName = Object.fromEntries(rooms.map((r) => [r.room, r.chinese]));
    const dl = h("dl", "facts",
      h("dt", "", "名字 Name"), h("dd", "name", p.name),
      h("dt", "", "余额 Balance"), h("dd", "balance", String(p.balance)),
      h("dt", "", "等级 Title"), h("dd", "title", p.title),
      h("dt", "", "积分 Points"), h("dd", "points", String(p.points)),
      h("dt", "", "局数 Hands"), h("dd", "hands-played", String(p.hands)));
    const table = h("table", "list recent", h("tr", "", ...["盘 hand", "场 room", "金币 coins", "时间 when", ""].map((x) => h("th", "", x))));
    for (const r of p.recent) {
      const stored = storedHand(r, hands);
      const replay = stored ? h("a", "button replay", "回放 Replay") : "";
      if (stored) replay.href = `#/replay/${stored.id}/${stored.seat}`;
      table.append(h("tr", "", h("td", "", r.hand), h("td", "room", roomName[r.room] ?? r.room),
        h("td", `num ${r.total > 0 ? "up" : r.total < 0 ? "down" : ""}`, String(r.total)), h("td", "", new Date(r.at * 1000).toLocaleString()), h("td", "", replay)));
    }
    page.append(dl, h("h3", "", "最近 Recent results"), p.recent.length ? table : h("p", "note", "还没有 none yet"));
  } catch (x) { page.append(h("p", "error", x.message)); }
}

/** The stored hand (GET /api/hands) of a coin hand ``CODE-UID.MATCH.HAND``: the same
 *  table and hand index, finished nearest the booking. */
function storedHand(r, hands) {
  const m = /^([A-Z0-9]+)-[0-9a-f]+\.\d+\.(\d+)$/.exec(r.hand);
  if (!m) return null;
  const same = hands.filter((x) => x.table === m[1] && x.hand === Number(m[2]));
  same.sort((a, b) => Math.abs(a.finished - r.at) - Math.abs(b.finished - r.at));
  return same[0] || null;
}

export async function leadersPage(root) {
  const page = h("div", "panel leaders", h("a", "home", "← 大厅 Lobby"), h("h2", "", "排行榜 Leaderboard"));
  page.querySelector(".home").href = "#/";
  root.replaceChildren(page);
  try {
    const { leaders } = await api.leaderboard();
    const table = h("table", "list", h("tr", "", ...["#", "名字 name", "等级 title", "积分 points", "局数 hands"].map((x) => h("th", "", x))));
    for (const s of leaders) {
      table.append(h("tr", "leader", h("td", "place", String(s.place)), h("td", "name", s.name), h("td", "title", s.title),
        h("td", "num points", String(s.points)), h("td", "num hands", String(s.hands))));
    }
    page.append(table);
  } catch (x) { page.append(h("p", "error", x.message)); }
}

// Accounts: search by name or id; a person's profile (balance, 积分, title, recent hands
// with their journal lines, sessions, addresses, sign-up and relief history,
// adjustments); freeze / unfreeze with a reason (D90); a coin adjustment (D91).
import { h } from "../js/board.js";
import { field, input } from "../js/forms.js";
import * as api from "./api.js";
import { rowsTable, reasonForm, showError, when, writeButton } from "./ui.js";

export async function peoplePage(body, query) {
  const q = input("search", query, { name: "q", placeholder: "名字或编号 name or id", required: true });
  const err = h("p", "error", "");
  const form = h("form", "panel search", h("h2", "", "查找账户 Find an account"),
    h("div", "row", q, h("button", "primary", "查找 Search")), err);
  form.onsubmit = (e) => { e.preventDefault(); location.hash = `#/people?q=${encodeURIComponent(q.value.trim())}`; };
  // a hand a player disputes, by the id they quote: a stored hand's, or a coin hand's 盘号
  const id = input("text", "", { name: "hand", placeholder: "123 / K7QF2M-…1.0", required: true, maxLength: 80 });
  const open = h("form", "panel open-hand-form", h("h2", "", "争议牌局 A disputed hand"),
    h("div", "row", id, h("button", "", "打开 Open")));
  open.onsubmit = (e) => { e.preventDefault(); location.hash = `#/hand/${encodeURIComponent(id.value.trim())}`; };
  body.append(form, open);
  q.focus();
  if (!query) return null;
  const { people } = await api.people(query);
  body.append(h("div", "panel results", h("h3", "", `${people.length} 个 found`),
    rowsTable(people.map((p) => ({ ...p, frozen: frozenText(p.frozen) })), "people",
      [["id", "#"], ["name", "名字 name"], ["balance", "余额 balance"], ["points", "积分 points"], ["frozen", "冻结 frozen"]],
      (r, k) => (k === "name" || k === "id" ? `#/person/${r.id}` : null))));
  return null;
}

const frozenText = (f) => (f ? "❄ 已冻结 frozen" : "");
const signed = (n) => (n > 0 ? `+${n}` : String(n));

/** A journal's lines: "Ann +120 · Bob -40" (an account that is no person's, the house's, by its number). */
const linesText = (lines) => (lines || []).map((l) => `${l.name ?? `#${l.account}`} ${signed(l.amount)}`).join(" · ");

export async function personPage(body, id) {
  const p = await api.person(id);
  const err = h("p", "error", "");
  const f = p.frozen; // {reason, at, by} or null
  const facts = h("dl", "facts",
    h("dt", "", "编号 Id"), h("dd", "id", String(p.id)),
    h("dt", "", "名字 Name"), h("dd", "name", p.name),
    h("dt", "", "注册 Signed up"), h("dd", "created", when(p.created_at)),
    h("dt", "", "余额 Balance"), h("dd", "balance", String(p.balance)),
    h("dt", "", "积分 Points"), h("dd", "points", String(p.points)),
    h("dt", "", "等级 Title"), h("dd", "title", p.title),
    h("dt", "", "局数 Hands"), h("dd", "hands-played", String(p.hands)),
    h("dt", "", "状态 State"), h("dd", `state ${f ? "frozen" : "active"}`,
      f ? `❄ 已冻结 frozen · ${f.reason} · ${f.by ?? ""} · ${when(f.at)}` : "正常 active"));
  const page = h("div", "panel person", h("h2", "", `账户 Account · ${p.name}`), facts);
  const reload = () => { body.replaceChildren(); return personPage(body, id); };
  // D90: frozen, the person cannot sign in, sit or be matched; a seat held plays on under 托管
  page.append(f
    ? reasonForm("unfreeze", "解冻 Unfreeze", async (reason) => { await api.unfreeze(p.id, reason); await reload(); }, err)
    : reasonForm("freeze", "冻结 Freeze", async (reason) => { await api.freeze(p.id, reason); await reload(); }, err));
  page.append(adjustForm(p.id, err, reload), err);
  const recent = p.recent.map((r) => ({ ...r, lines: linesText(r.lines) }));
  page.append(
    h("h3", "", "最近牌局 Recent hands, with their journal lines (盘号 → 争议 dispute view)"),
    rowsTable(recent, "recent", [["hand_id", "盘 hand"], ["room", "场 room"], ["at", "时间 when"], ["total", "金币 coins"],
      ["journal_id", "账 journal"], ["lines", "账目 lines"]], (r, k) => (k === "hand_id" ? `#/hand/${encodeURIComponent(r.hand_id)}` : null)),
    h("h3", "", "调整 Adjustments"),
    rowsTable(p.adjustments, "adjustments", [["journal_id", "账 journal"], ["at", "时间 when"], ["amount", "数额 amount"],
      ["balance_after", "余额 balance after"], ["counts_in_score", "计入积分 in 积分"], ["operator", "操作员 operator"], ["reason", "原因 reason"], ["key", "键 key"]]),
    h("h3", "", "注册、救济、赠送、调整 Sign-up, reliefs, grants, adjustments"),
    rowsTable(p.history, "history", [["journal_id", "账 journal"], ["kind", "类 kind"], ["at", "时间 when"], ["amount", "数额 amount"], ["memo", "备注 memo"]]),
    h("h3", "", "登录会话 Sessions"),
    rowsTable(p.sessions, "sessions", [["created", "开始 created"], ["expires", "到期 expires"], ["address", "地址 address"]]),
    h("h3", "", "使用过的地址 Addresses used"),
    rowsTable(p.addresses.map((a) => ({ address: a })), "addresses", [["address", "地址 address"]]));
  body.append(page);
  return null;
}

/** D91: coins between the person and the house, with a reason; the key makes a second
 *  press of the same form one adjustment, not two. */
function adjustForm(id, err, reload) {
  const amount = input("number", "", { name: "amount", step: 1, required: true, placeholder: "+500 / -200" });
  const reason = input("text", "", { name: "reason", required: true, maxLength: 500, placeholder: "原因 reason" });
  const key = input("text", crypto.randomUUID(), { name: "key", required: true, maxLength: 80 });
  const score = input("checkbox", false, { name: "counts_in_score" });
  const go = writeButton("调整 Adjust", "primary adjust", null);
  go.type = "submit";
  for (const el of [amount, reason, key, score]) el.disabled = !api.mayWrite();
  const form = h("form", "adjust-form", h("h3", "", "金币调整 Coin adjustment (与庄家 with the house)"),
    field("数额 Amount (+ to the person)", amount), field("原因 Reason", reason), field("幂等键 Key", key),
    field("计入积分 Counts in 积分", score), go);
  form.onsubmit = async (e) => {
    e.preventDefault();
    if (!api.mayWrite()) return;
    try {
      await api.adjust(id, { amount: Number(amount.value), reason: reason.value.trim(), key: key.value.trim(), counts_in_score: score.checked });
      await reload();
    } catch (x) { showError(err, x); }
  };
  return form;
}

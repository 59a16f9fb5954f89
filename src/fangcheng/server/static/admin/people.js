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
  body.append(form);
  q.focus();
  if (!query) return null;
  const { people } = await api.people(query);
  body.append(h("div", "panel results", h("h3", "", `${people.length} 个 found`),
    rowsTable(people.map((p) => ({ ...p, frozen: frozenText(p.frozen) })), "people",
      [["id", "#"], ["name", "名字 name"], ["balance", "余额 balance"], ["frozen", "冻结 frozen"]],
      (r, k) => (k === "name" || k === "id" ? `#/person/${r.id}` : null))));
  return null;
}

const frozenText = (f) => (f ? (typeof f === "string" ? `❄ ${f}` : "❄") : "");

/** The profile's lists, in this order, with their headings (any other list follows). */
const LISTS = [
  ["recent", "最近牌局 Recent hands (with their journal lines)"],
  ["hands", "牌局 Hands"],
  ["adjustments", "调整 Adjustments"],
  ["sessions", "登录会话 Sessions"],
  ["addresses", "使用过的地址 Addresses used"],
  ["signups", "注册 Sign-up"],
  ["sign_ups", "注册 Sign-up"],
  ["reliefs", "救济 Reliefs"],
];

/** A stored hand's id in a row of the profile's hands, for its dispute view. */
const storedId = (r) => r.stored ?? r.stored_id ?? r.hand_id ?? (typeof r.id === "number" ? r.id : null);

export async function personPage(body, id) {
  const p = await api.person(id);
  const err = h("p", "error", "");
  const frozen = p.frozen_reason ?? (typeof p.frozen === "string" ? p.frozen : p.frozen ? "" : null);
  const facts = h("dl", "facts",
    h("dt", "", "编号 Id"), h("dd", "id", String(p.id ?? id)),
    h("dt", "", "名字 Name"), h("dd", "name", p.name ?? ""),
    h("dt", "", "余额 Balance"), h("dd", "balance", String(p.balance ?? "")),
    h("dt", "", "积分 Points"), h("dd", "points", String(p.points ?? p.score ?? "")),
    h("dt", "", "等级 Title"), h("dd", "title", p.title ?? ""),
    h("dt", "", "状态 State"), h("dd", `state ${frozen != null ? "frozen" : "active"}`,
      frozen != null ? `❄ 已冻结 frozen${frozen ? ` · ${frozen}` : ""}${p.frozen_at ? ` · ${when(p.frozen_at)}` : ""}` : "正常 active"));
  const page = h("div", "panel person", h("h2", "", `账户 Account · ${p.name ?? id}`), facts);
  const reload = () => { body.replaceChildren(); return personPage(body, id); };
  // D90: frozen, the person cannot sign in, sit or be matched; a seat held plays on under 托管
  page.append(frozen != null
    ? reasonForm("unfreeze", "解冻 Unfreeze", async (reason) => { await api.unfreeze(p.id ?? id, reason); await reload(); }, err)
    : reasonForm("freeze", "冻结 Freeze", async (reason) => { await api.freeze(p.id ?? id, reason); await reload(); }, err));
  page.append(adjustForm(p.id ?? id, err, reload), err);
  for (const [key, head] of LISTS) {
    if (!Array.isArray(p[key])) continue;
    page.append(h("h3", "", head), rowsTable(p[key], key, null,
      (r, k) => ((key === "recent" || key === "hands") && storedId(r) != null && k === Object.keys(r)[0] ? `#/hand/${storedId(r)}` : null)));
  }
  for (const [key, v] of Object.entries(p)) { // whatever else the server says of the person
    if (Array.isArray(v) && !LISTS.some(([k]) => k === key)) page.append(h("h3", "", key), rowsTable(v, key));
  }
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

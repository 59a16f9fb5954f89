// The operators' console (issue 37), by the address's hash: #/ (accounts), #/person/ID,
// #/tables, #/table/CODE (a table as a spectator sees it), #/hand/ID (the dispute view
// of a stored hand: its id, or a coin hand's ledger id), #/audit. It talks to
// /api/admin/ only, with an operator's session.
import { h } from "../js/board.js";
import { field, input } from "../js/forms.js";
import * as api from "./api.js";
import { auditPage } from "./audit.js";
import { disputePage } from "./dispute.js";
import { peoplePage, personPage } from "./people.js";
import { showError } from "./ui.js";
import { tablePage, tablesPage } from "./tables.js";

const root = document.getElementById("admin");
let leaving = null; // the open page's clean-up (a refresh timer)

function logInPage() {
  const name = input("text", "", { name: "name", placeholder: "操作员 operator", required: true, autocomplete: "username" });
  const password = input("password", "", { name: "password", required: true, autocomplete: "current-password" });
  const err = h("p", "error", "");
  const form = h("form", "panel login admin-login",
    h("h1", "", "方城 运营"), h("p", "lead", "Fangcheng · operators' console"),
    field("操作员 Operator", name), field("密码 Password", password),
    h("button", "primary", "登录 Log in"), err);
  form.onsubmit = async (e) => {
    e.preventDefault();
    try { await api.logIn(name.value.trim(), password.value); route(); } catch (x) { showError(err, x); }
  };
  root.replaceChildren(form);
  name.focus();
}

/** The bar over every page: where to go, who is logged in, as which role. */
function navEl(here) {
  const s = api.session();
  const link = (href, label, key) => {
    const a = h("a", `nav-${key}${here === key ? " here" : ""}`, label);
    a.href = href;
    return a;
  };
  const out = h("button", "link log-out", "退出 Log out");
  out.onclick = async () => { await api.logOut().catch(() => {}); route(); };
  const role = s.operator.role === "admin" ? "管理员 admin" : "客服 support · 只读 read only";
  return h("nav", "topbar admin-nav",
    h("span", "title", "方城 运营 Operators"),
    link("#/", "账户 Accounts", "people"), link("#/tables", "牌桌 Tables", "tables"), link("#/audit", "审计 Audit", "audit"),
    h("span", `who role-${s.operator.role}`, `${s.operator.name} · ${role}`), out);
}

const PAGES = [
  [/^#\/person\/(\d+)$/, "people", personPage],
  [/^#\/tables$/, "tables", tablesPage],
  [/^#\/table\/([A-Za-z0-9]+)$/, "tables", tablePage],
  [/^#\/hand\/([^/]+)$/, "hand", disputePage],
  [/^#\/audit$/, "audit", auditPage],
  [/^#\/(?:people)?(?:\?q=(.*))?$/, "people", peoplePage],
];

async function route() {
  if (leaving) { leaving(); leaving = null; }
  if (!api.session()) { logInPage(); return; }
  const hash = location.hash || "#/";
  const [re, key, page] = PAGES.find(([r]) => r.test(hash)) || PAGES[PAGES.length - 1];
  const arg = decodeURIComponent((re.exec(hash) || [])[1] || "");
  const body = h("div", "admin-page");
  root.replaceChildren(navEl(key), body);
  // a page returns its clean-up; a 401 (the session expired) asks for a log-in again
  leaving = (await page(body, arg, { again: route }).catch((e) => {
    if (e.status === 401) { logInPage(); return null; }
    body.append(h("p", "panel error", `${e.code || ""} ${e.message || e}`));
    return null;
  })) || null;
}

window.addEventListener("hashchange", route);
route();

// The operators' calls (/api/admin/, docs/operations.md): the session is kept for this
// tab only (sessionStorage), shorter-lived than a player's, and sent as its bearer.
import { request } from "../js/api.js";

const KEY = "fangcheng.operator";

/** {token, operator: {id, name, role}, expires}, or null. */
export function session() {
  try { return JSON.parse(sessionStorage.getItem(KEY)) || null; } catch { return null; }
}
export const forget = () => sessionStorage.removeItem(KEY);
/** Whether this operator may write (freeze, adjust, close): an admin; support reads. */
export const mayWrite = () => session()?.operator?.role === "admin";

export async function call(method, path, body) {
  try {
    return await request(method, `/api/admin/${path}`, body, session()?.token);
  } catch (e) {
    if (e.status === 401) forget(); // expired or unknown: log in again
    throw e;
  }
}

export async function logIn(name, password) {
  const s = await request("POST", "/api/admin/session", { name, password });
  sessionStorage.setItem(KEY, JSON.stringify(s));
  return s;
}
export async function logOut() {
  try { await call("DELETE", "session"); } finally { forget(); }
}

const q = encodeURIComponent;
export const people = (query) => call("GET", `people?q=${q(query)}`);
export const person = (id) => call("GET", `people/${q(id)}`);
export const freeze = (id, reason) => call("POST", `people/${q(id)}/freeze`, { reason });
export const unfreeze = (id, reason) => call("POST", `people/${q(id)}/unfreeze`, { reason });
export const adjust = (id, body) => call("POST", `people/${q(id)}/adjust`, body);
export const audit = (before) => call("GET", `audit?limit=100${before ? `&before=${q(before)}` : ""}`);
export const tables = () => call("GET", "tables");
export const table = (code) => call("GET", `tables/${q(code)}`);
export const closeTable = (code, reason) => call("POST", `tables/${q(code)}/close`, { reason });
export const hand = (id) => call("GET", `hands/${q(id)}`);

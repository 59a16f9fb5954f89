// The HTTP calls of docs/protocol.md, with the session token kept in localStorage so a
// reload (or another tab) comes back to the same seat.

const KEY = "fangcheng.session";

export function session() {
  try { return JSON.parse(localStorage.getItem(KEY)) || null; } catch { return null; }
}

export function forget() { localStorage.removeItem(KEY); }

export class ApiError extends Error {
  constructor(status, code, message) { super(message); this.status = status; this.code = code; }
}

/** One JSON call with ``token`` as its bearer (none: anonymous); an error answer thrown
 *  as an `ApiError` with the server's code and message. */
export async function request(method, path, body, token) {
  const headers = { "Content-Type": "application/json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  let data = null;
  try { data = await res.json(); } catch { /* an empty answer */ }
  if (!res.ok) {
    const err = (data && data.error) || {};
    throw new ApiError(res.status, err.code || String(res.status), err.message || res.statusText);
  }
  return data;
}

/** A call with this person's session (forgotten when the server no longer knows it). */
export async function call(method, path, body) {
  try {
    return await request(method, path, body, session()?.token);
  } catch (e) {
    if (e.status === 401) forget();
    throw e;
  }
}

export async function login(name) {
  const s = await call("POST", "/api/session", { name });
  localStorage.setItem(KEY, JSON.stringify(s));
  return s;
}

/** An account (the coin platform): sign up or log in; the session is kept as a guest's. */
export async function account(name, password, signUp) {
  const s = await call("POST", signUp ? "/api/account/signup" : "/api/account/login", { name, password });
  localStorage.setItem(KEY, JSON.stringify(s));
  return s;
}
export async function logOut(everywhere = false) {
  try { await call("POST", "/api/account/logout", { everywhere }); } finally { forget(); }
}
export const profile = () => call("GET", "/api/account");
export const relief = () => call("POST", "/api/account/relief");
export const leaderboard = () => call("GET", "/api/leaderboard");
export const rooms = () => call("GET", "/api/coins/rooms");
export const quickMatch = (room) => call("POST", "/api/coins/match", { room });
export const lobby = () => call("GET", "/api/lobby");
export const practice = (rules, bot) => call("POST", "/api/practice", { rules, bot });
export const openTable = (settings) => call("POST", "/api/tables", settings);
export const join = (code, spectate = false) => call("POST", `/api/tables/${code}/join`, { spectate });
export const botToken = (code) => call("POST", `/api/tables/${code}/bot-token`);
export const hands = () => call("GET", "/api/hands");
export const hand = (id) => call("GET", `/api/hands/${id}`);

/** The websocket URL of this server. */
export function wsUrl() {
  return `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`;
}

/** The table this person last sat at: reopened on a reload. */
export const lastTable = {
  get: () => localStorage.getItem("fangcheng.table"),
  set: (code) => (code ? localStorage.setItem("fangcheng.table", code) : localStorage.removeItem("fangcheng.table")),
};

// What a table feels like: the calls shown large over the seat that made them, the
// claimed tile flying to its meld, a win laid out with its fans, and sound — every sound
// made here by Web Audio (nothing fetched), the calls spoken in Mandarin where the
// browser has a zh-CN voice (Web Speech). Muting is remembered by the browser.
import { h } from "./board.js";
import { tileEl, tilesEl } from "./tiles.js";

const MUTE = "fangcheng.mute";
export const muted = () => localStorage.getItem(MUTE) === "on";
export function setMuted(on) {
  if (on) localStorage.setItem(MUTE, "on"); else localStorage.removeItem(MUTE);
}

let audio = null;
function context() {
  if (!audio && window.AudioContext) audio = new AudioContext();
  if (audio && audio.state === "suspended") audio.resume().catch(() => {});
  return audio;
}

/** Notes of each sound: [frequency Hz, start s, length s, wave]. */
const NOTES = {
  discard: [[1800, 0, 0.035, "square"], [700, 0.01, 0.05, "triangle"]],
  chi: [[523, 0, 0.09, "triangle"], [659, 0.08, 0.12, "triangle"]],
  peng: [[440, 0, 0.1, "square"], [440, 0.12, 0.12, "square"]],
  gang: [[392, 0, 0.09, "sawtooth"], [392, 0.1, 0.09, "sawtooth"], [523, 0.2, 0.16, "sawtooth"]],
  hu: [[523, 0, 0.12, "triangle"], [659, 0.1, 0.12, "triangle"], [784, 0.2, 0.12, "triangle"], [1047, 0.3, 0.3, "triangle"]],
  tick: [[950, 0, 0.04, "sine"]],
};

/** Play one of `NOTES` (quietly), unless muted. */
export function sound(kind) {
  const notes = NOTES[kind];
  const ctx = !muted() && notes ? context() : null;
  if (!ctx) return;
  const t0 = ctx.currentTime + 0.01;
  for (const [freq, at, len, wave] of notes) {
    const osc = ctx.createOscillator(), gain = ctx.createGain();
    osc.type = wave; osc.frequency.value = freq;
    gain.gain.setValueAtTime(0.0001, t0 + at);
    gain.gain.exponentialRampToValueAtTime(0.12, t0 + at + 0.008);
    gain.gain.exponentialRampToValueAtTime(0.0001, t0 + at + len);
    osc.connect(gain).connect(ctx.destination);
    osc.start(t0 + at); osc.stop(t0 + at + len + 0.02);
  }
}

/** A Mandarin voice, if the browser has one. */
function voice() {
  const voices = window.speechSynthesis ? speechSynthesis.getVoices() : [];
  return voices.find((v) => /^zh[-_]CN/i.test(v.lang)) || voices.find((v) => /^zh/i.test(v.lang)) || null;
}

/** A call said aloud in Mandarin, else its sound. */
export function call(kind, words) {
  if (muted()) return;
  const v = voice();
  if (!v) { sound(kind); return; }
  const say = new SpeechSynthesisUtterance(words);
  say.voice = v; say.lang = v.lang; say.rate = 1.15;
  speechSynthesis.speak(say);
}

/** The words of a call event, and the sound it falls back to. */
export function callOf(e) {
  if (e.type === "call") return { kind: e.kind === "chi" ? "chi" : "peng", words: e.kind === "chi" ? "吃" : "碰" };
  if (e.type === "kong") return { kind: "gang", words: e.kind === "xuanfeng" ? "旋风杠" : "杠" };
  if (e.type === "win") return { kind: "hu", words: e.by === "self_draw" ? "自摸" : "胡" };
  return null;
}

/** A layer over the page that the table's redraws leave alone. */
function layer() {
  let el = document.querySelector(".feel-layer");
  if (!el) { el = h("div", "feel-layer"); document.body.append(el); }
  return el;
}

/** When the calls shown now will have been seen (ms since the epoch): a settlement
 *  waits for them rather than open under them. */
let seenAt = 0;
const CALL_MS = 1400;

/** How long until the calls shown have been seen (0: none showing). */
export const callsLeft = () => Math.max(0, seenAt - Date.now());

/** Take every call and laid-out win off the page (the settlement shows the win now). */
export function clearCalls() {
  document.querySelector(".feel-layer")?.replaceChildren();
  seenAt = 0;
}

/** "碰!" large over the seat's place on the board, for a moment. */
export function shout(seat, words) {
  const at = document.querySelector(`.board .seat[data-seat="${seat}"]`);
  if (!at) return;
  const el = h("div", "callout", `${words}!`);
  el.dataset.seat = seat;
  layer().append(el);
  const [x, y] = calloutAt(at, el.offsetWidth, el.offsetHeight);
  el.style.left = `${x}px`;
  el.style.top = `${y}px`;
  seenAt = Math.max(seenAt, Date.now() + CALL_MS);
  setTimeout(() => el.remove(), CALL_MS);
}

/** Where a callout of ``w`` × ``ht`` rests (its centre, at scale 1): over the seat's
 *  tiles, clear of its name plate (who called stays readable, issue 41), inside the
 *  window's width. */
function calloutAt(seat, w, ht) {
  const over = (seat.querySelector(".handrow") || seat).getBoundingClientRect();
  const x = Math.min(Math.max(over.left + over.width / 2, w / 2), innerWidth - w / 2);
  let y = over.top + over.height / 2;
  const plate = seat.querySelector(".plate")?.getBoundingClientRect();
  const meets = plate && x - w / 2 < plate.right && plate.left < x + w / 2
    && y - ht / 2 < plate.bottom && plate.top < y + ht / 2;
  if (meets) y = plate.top < y ? plate.bottom + ht / 2 + 2 : plate.top - ht / 2 - 2;
  return [x, y];
}

/** The claimed tile from where it lay to the caller's newest meld (rects of before the
 *  redraw and after it). */
export function fly(tile, from, seat) {
  const melds = document.querySelectorAll(`.board .seat[data-seat="${seat}"] .melds .meld`);
  const to = melds.length ? melds[melds.length - 1].getBoundingClientRect() : null;
  if (!from || !to || !window.Element.prototype.animate) return;
  const el = tileEl(tile, { size: "small", extra: "flying" });
  el.style.left = `${from.left}px`; el.style.top = `${from.top}px`;
  layer().append(el);
  const dx = to.left + to.width / 2 - (from.left + from.width / 2), dy = to.top - from.top;
  el.animate([{ transform: "none" }, { transform: `translate(${dx}px, ${dy}px) scale(0.9)` }], { duration: 450, easing: "ease-in" })
    .finished.then(() => el.remove(), () => el.remove());
}

/** A win laid out: who, the hand as the table shows it, the winning tile, its fans. */
export function winBanner(e, who, hand, melds, fans) {
  const el = h("div", "win-banner",
    h("div", "win-banner-title", `${who(e.seat)} ${e.by === "self_draw" ? "自摸" : "胡"}! `, tileEl(e.tile, { size: "small", extra: "win" })));
  if (hand.length) {
    const row = h("div", "win-hand", tilesEl(hand, { size: "small" }), tileEl(e.tile, { size: "small", extra: "win" }));
    for (const m of melds) row.append(h("span", "meld", tilesEl(m.tiles, { size: "small" })));
    el.append(row);
  }
  if (fans.length) el.append(h("div", "win-fans", fans.join(" · ")));
  layer().append(el);
  seenAt = Math.max(seenAt, Date.now() + CALL_MS); // a settlement may replace it after the call
  setTimeout(() => el.remove(), 3500);
}

// Optional aids from the seat's own view: the tiles a hand waits on, by shape (four sets
// and a pair, or seven pairs), and how many of each are still unseen. The rule set's
// further conditions (a 缺 suit, an open hand, 幺九) are the engine's: it offers 胡 only
// where they hold, so these are the shape's waits, and labelled so.
import { ALL_FACES, parseTiles } from "./tiles.js";

const INDEX = Object.fromEntries(ALL_FACES.map((t, i) => [t, i]));

function counts(tiles) {
  const c = new Array(34).fill(0);
  for (const t of tiles) if (t in INDEX) c[INDEX[t]]++;
  return c;
}

/** Whether counts split into sets (pungs, and runs within a suit) and one pair. */
function complete(c, pair = false) {
  const i = c.findIndex((n) => n > 0);
  if (i < 0) return pair;
  if (c[i] >= 3) { c[i] -= 3; const ok = complete(c, pair); c[i] += 3; if (ok) return true; }
  if (!pair && c[i] >= 2) { c[i] -= 2; const ok = complete(c, true); c[i] += 2; if (ok) return true; }
  const suited = i < 27 && i % 9 <= 6;
  if (suited && c[i + 1] > 0 && c[i + 2] > 0) {
    c[i]--; c[i + 1]--; c[i + 2]--;
    const ok = complete(c, pair);
    c[i]++; c[i + 1]++; c[i + 2]++;
    if (ok) return true;
  }
  return false;
}

const sevenPairs = (c) => c.reduce((a, n) => a + n, 0) === 14 && c.every((n) => n === 0 || n === 2 || n === 4);

/** The faces that complete ``tiles`` (3k + 1 concealed tiles). */
export function waits(tiles, { que = null } = {}) {
  const c = counts(tiles);
  if (que && tiles.some((t) => t[1] === que)) return [];
  const out = [];
  for (let i = 0; i < 34; i++) {
    if (c[i] >= 4) continue;
    if (que && ALL_FACES[i][1] === que) continue;
    c[i]++;
    if (complete(c) || sevenPairs(c)) out.push(ALL_FACES[i]);
    c[i]--;
  }
  return out;
}

/** Copies of each face this seat has not seen: four less its hand, rivers, melds, indicators. */
export function unseen(obs) {
  const seen = counts(parseTiles(obs.hand));
  const add = (text) => parseTiles(text || "").forEach((t) => seen[INDEX[t]]++);
  for (const s of obs.seats) {
    add(s.river);
    for (const m of s.melds) add(m.tiles);
    if (s.revealed && s !== obs.seats[obs.seat]) add(s.revealed);
  }
  add(obs.retired);
  return Object.fromEntries(ALL_FACES.map((t, i) => [t, Math.max(0, 4 - seen[i])]));
}

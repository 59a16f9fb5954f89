// Tiles in notation ("5m", "E", "C"), their names, and their pictures.

const NUMERALS = "一二三四五六七八九";
const SUITS = { m: ["万", "characters"], p: ["筒", "dots"], s: ["条", "bamboo"] };
const HONOURS = {
  E: ["东风", "East wind"], S: ["南风", "South wind"], W: ["西风", "West wind"],
  N: ["北风", "North wind"], C: ["红中", "Red dragon"], F: ["发财", "Green dragon"],
  P: ["白板", "White dragon"],
};
/** The canonical order of a sorted hand: suits m p s, then E S W N and 中 发 白. */
const ORDER = [];
for (const s of "mps") for (let n = 1; n <= 9; n++) ORDER.push(`${n}${s}`);
ORDER.push(..."ESWNCFP");
const RANK = Object.fromEntries(ORDER.map((t, i) => [t, i]));

export const ALL_FACES = ORDER;
export const SUIT_NAMES = { m: "万 characters", p: "筒 dots", s: "条 bamboo" };
export const SUIT_CN = { m: "万", p: "筒", s: "条" };

/** "123m45pE" → ["1m","2m","3m","4p","5p","E"], in the order written. */
export function parseTiles(text) {
  const out = [];
  let digits = [];
  for (const ch of text || "") {
    if (ch >= "1" && ch <= "9") digits.push(ch);
    else if ("mps".includes(ch)) { for (const d of digits) out.push(d + ch); digits = []; }
    else if ("ESWNCFP".includes(ch)) out.push(ch);
  }
  return out;
}

export function sortTiles(tiles) {
  return [...tiles].sort((a, b) => (RANK[a] ?? 99) - (RANK[b] ?? 99));
}

/** 五万 5 of characters, 红中 Red dragon. */
export function tileName(t) {
  if (HONOURS[t]) return `${HONOURS[t][0]} ${HONOURS[t][1]}`;
  const n = Number(t[0]);
  const [cn, en] = SUITS[t[1]];
  const chinese = t === "1s" ? "幺鸡" : NUMERALS[n - 1] + cn;
  return `${chinese} ${n} of ${en}`;
}

const TILE_DIR = new URL("../tiles/", import.meta.url);

/** A tile picture: face up (notation) or face down (null). Options: small, big, flat. */
export function tileEl(t, { size = "", extra = "" } = {}) {
  const span = document.createElement("span");
  span.className = `tile ${size} ${extra}`.trim();
  const img = document.createElement("img");
  img.src = new URL(`${t || "back"}.svg`, TILE_DIR).href;
  img.alt = t || "?";
  img.draggable = false;
  span.append(img);
  if (t) {
    span.dataset.tile = t;
    span.dataset.name = tileName(t);
    span.title = tileName(t);
  } else span.title = "face down 暗";
  return span;
}

/** A row of tiles. */
export function tilesEl(tiles, opts = {}) {
  const row = document.createElement("span");
  row.className = "tiles";
  for (const t of tiles) row.append(tileEl(t, opts));
  return row;
}

/** Remove one copy of ``t`` from ``arr`` (in place); whether one was there. */
export function removeOne(arr, t) {
  const i = arr.indexOf(t);
  if (i >= 0) arr.splice(i, 1);
  return i >= 0;
}

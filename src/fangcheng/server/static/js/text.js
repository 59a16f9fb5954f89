// Words shown at the table, Chinese with English beside them.
import { SUIT_NAMES, parseTiles, tileName } from "./tiles.js";

export const WINDS = ["东 E", "南 S", "西 W", "北 N"];
export const RULES = {
  baishan: "白山 Baishan",
  baishan_platform: "白山·平台 Baishan platform",
  baicheng: "白城 Baicheng",
  sichuan: "四川 血战 Sichuan",
};
export const rulesName = (r) => RULES[r] || r;
/** The coin rooms (§3.7), in their order. */
export const ROOMS = {
  free: "自由场 free", junior: "初级场 junior", intermediate: "中级场 intermediate", anti_cheat: "高级防作弊场 anti-cheat",
};

const BY = {
  discard: "点炮 on a discard",
  self_draw: "自摸 self-drawn",
  robbed_kong: "抢杠 robbing a kong",
  treasure: "宝 on the treasure",
  fenzhang: "分张 on the last tiles",
};
export const byText = (by) => BY[by] || by;

/** How an action is labelled on its button. */
export function actionLabel(text) {
  const [kind, arg = ""] = text.split(" ");
  switch (kind) {
    case "hu": return "胡 Win";
    case "pass": return "过 Pass";
    case "chi": return "吃 Chi";
    case "peng": return "碰 Peng";
    case "gang": return "杠 Kong";
    case "angang": return "暗杠 Concealed kong";
    case "bugang": return "补杠 Add to kong";
    case "xuanfeng": return "旋风杠 中发白";
    case "add": return "补 Add to 旋风杠";
    case "que": return `定缺 ${SUIT_NAMES[arg]}`;
    case "piao": return arg === "0" ? "不漂 No bet" : `漂 ${arg}`;
    case "ting": return "报听 Declare ready";
    case "discard": return "打 Discard";
    default: return text;
  }
}

/** The tiles an action shows on its button. */
export function actionTiles(text) {
  const [kind, arg = ""] = text.split(" ");
  if (kind === "chi") return parseTiles(arg);
  if (["peng", "gang", "angang", "bugang", "add"].includes(kind)) return parseTiles(arg);
  if (kind === "xuanfeng") return ["C", "F", "P"];
  return [];
}

/** One event of a seat's stream as a log line; null for noise. ``who(seat)`` names seats. */
export function eventLine(e, who, hand) {
  const t = (x) => (x ? `${x} ${tileName(x).split(" ")[0]}` : "");
  switch (e.type) {
    case "deal": return `第${hand + 1}盘 hand ${hand + 1} dealt · 庄 dealer ${who(e.dealer)}`;
    case "treasure": return e.tile ? `宝 treasure indicator: ${t(e.tile)}` : "宝 no treasure left";
    case "piao": return "漂 bets: " + e.bets.map((b, s) => `${who(s)} ${b}`).join(", ");
    case "que": return "定缺 voids: " + e.suits.map((q, s) => `${who(s)} ${SUIT_NAMES[q]}`).join(", ");
    case "draw": return e.tile ? `${who(e.seat)} 摸 draw ${t(e.tile)}${e.fenzhang ? " (分张)" : ""}` : null;
    case "replacement": return `${who(e.seat)} 补牌 replacement${e.tile ? " " + t(e.tile) : ""}`;
    case "discard": return `${who(e.seat)} 打 ${t(e.tile)}${e.ready ? " · 报听 ready!" : ""}`;
    case "call": {
      const verb = { chi: "吃 chi", peng: "碰 peng", ming_gang: "杠 kong" }[e.kind];
      return `${who(e.seat)} ${verb} ${e.tiles} from ${who(e.source)}`;
    }
    case "kong":
      if (e.kind === "an_gang") return `${who(e.seat)} 暗杠 concealed kong${e.tile ? " of " + t(e.tile) : ""}`;
      if (e.kind === "xuanfeng") return `${who(e.seat)} 旋风杠 中发白`;
      return `${who(e.seat)} ${e.kind === "bugang" ? "补杠 kong" : "补 旋风杠"} ${t(e.tile)}`;
    case "add": return `${who(e.seat)} adds ${t(e.tile)} (${e.kind === "bugang" ? "补杠" : "旋风杠"}) — may be robbed`;
    case "robbed": return `${who(e.seat)}'s ${t(e.tile)} is robbed 抢杠`;
    case "win": {
      const from = e.source != null ? ` from ${who(e.source)}` : "";
      const fans = e.fans.length ? ` · ${e.fans.join(" ")}` : "";
      return `${who(e.seat)} 胡 wins on ${t(e.tile)} · ${byText(e.by)}${from}${fans}`;
    }
    case "payment": return `付 paid: ${e.reason}${e.tile ? " " + e.tile : ""} (${deltasText(e.deltas, who)})`;
    case "escape": return `${who(e.seat)} 逃跑 left the hand`;
    case "exhausted": return "流局 the wall is exhausted";
    case "fenzhang": return "分张 the last tiles, one to each seat";
    case "flower_pig": return `${who(e.seat)} passed a win in the last four tiles: 花猪 flower pig`;
    case "reveal": return "亮牌 every hand laid open";
    case "end": return { win: "本盘结束 hand over", draw: "流局 drawn hand", escape: "逃跑 hand abandoned", abandoned: "运营关桌 closed by an operator" }[e.how];
    default: return null;
  }
}

export function deltasText(deltas, who) {
  return deltas.map((d, s) => (d ? `${who(s)} ${d > 0 ? "+" : ""}${d}` : null)).filter(Boolean).join(", ");
}

/** The engine's reason ``胡 seat 2`` with the seat named. */
export function reasonText(reason, who) {
  const m = /^(.*) seat (\d)$/.exec(reason);
  return m ? `${m[1]} ${who(Number(m[2]))}` : reason;
}

/** A fan's reason for a player: without the rule book's decision numbers (D59). */
export function plainWhy(why) {
  return (why || "").replace(/,? *\bD\d+\b/g, "").replace(/ *\(\s*\)/g, "").replace(/\(\s*,\s*/g, "(");
}

"""Fill the tables of the rules pages (``docs/rules/*.md``) from the rule sets' data, and
copy each page to where the web client serves it (``static/rules/``).

A page is prose written by hand around blocks marked ``<!-- generated: KIND -->`` …
``<!-- end generated -->``; every such block is rewritten here from `fangcheng.rules`
(the fans, the payments, the kong money) and the platform's constants (rooms, stakes,
titles), so a page cannot say other than what the engine does. Run
``python tools/gen_rules_pages.py`` after a rule set changes; ``tests/test_rules_pages.py``
fails while a page or its served copy is stale.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from fangcheng.platform.accounts import (
    RELIEF,
    RELIEF_BELOW,
    SIGNUP_GRANT,
    SIGNUP_GRANTS_PER_ADDRESS,
)
from fangcheng.rules.fans import Fan, Scope
from fangcheng.rules.ruleset import KongPayers, RuleSet, find_rules
from fangcheng.scoring.payments import RANKS, STAKE_TIERS

ROOT = Path(__file__).resolve().parent.parent
PAGES = ROOT / "docs/rules"
SERVED = ROOT / "src/fangcheng/server/static/rules"
NAMES = ("baishan", "baishan_platform", "baicheng", "sichuan")
BLOCK = re.compile(r"(<!-- generated: (\w+) -->\n)(.*?)(<!-- end generated -->)", re.S)

SCOPES = {
    Scope.WINNER: "赢家 winner: every payer's N",
    Scope.PAYER: "付方 payer: that payer's N only",
    Scope.BOTH: "双方 both: the winner's for all, a payer's for itself",
}
PAYERS = {
    KongPayers.OTHERS: "其他三家 the three others",
    KongPayers.UNFINISHED: "未胡的其他家 the others not yet won",
    KongPayers.SOURCE: "点杠者 the discarder alone",
}


def _yes(flag: bool) -> str:
    return "有 yes" if flag else "无 no"


def _value(fan: Fan, rules: RuleSet) -> str:
    if fan.flat is not None:
        return f"每家 {fan.flat} × 底注 flat, per payer"
    if fan.at_cap:
        return f"{rules.cap_fans} (封顶 the cap)"
    return str(fan.value)


def fans(rules: RuleSet) -> list[str]:
    """The fan table, in the rule set's order."""
    rows = [
        "| 番 fan | English | 番数 value | 算给谁 counts for | 何时 when |",
        "|---|---|---|---|---|",
    ]
    for f in rules.fans:
        rows.append(f"| {f.name} | {f.en} | {_value(f, rules)} | {SCOPES[f.scope]} | {f.why} |")
    return rows


def payments(rules: RuleSet) -> list[str]:
    """How a win and the hand's other items are paid, each from the rule set's data."""
    cap = (
        f"封顶 {rules.cap_fans} 番: N counts at most {rules.cap_fans}"
        if rules.cap_fans is not None
        else f"封顶 each payment at most {rules.cap_base} × 底注"
        if rules.cap_base is not None
        else "不封顶 no cap"
    )
    discard = (
        "点炮者一家 the discarder alone" if rules.discarder_only else "三家都付 all three others"
    )
    self_draw = (
        "未胡的其他家 every other seat not yet won"
        if rules.unfinished_pay_self_draw
        else "三家都付 all three others"
    )
    rows = [
        "| 项目 item | 规则 rule |",
        "|---|---|",
        "| 胡牌 a win | 每家付 底注 × 2^N (N: the winner's fans and the payer's own) |",
        f"| 封顶 cap | {cap} |",
        f"| 点炮 a discard win | {discard} |",
        f"| 自摸 a self-draw | {self_draw} |",
        f"| 一炮多响 several win one discard | {_yes(rules.multiple_winners)} |",
    ]
    if rules.piao_bets:
        bets = " / ".join(f"{b} × 底注" if b else "0" for b in rules.piao_bets)
        rows.append(f"| 漂 bets before the deal | {bets} |")
    if rules.draw_dealer_pays:
        rows.append(f"| 流局 the wall runs out | 庄家付每家 {rules.draw_dealer_pays} × 底注 |")
    if rules.chase_dealer_pays:
        rows.append(f"| 撵庄 chasing the dealer | 庄家付每家 {rules.chase_dealer_pays} × 底注 |")
    if rules.escape_pays:
        rows.append(f"| 逃跑 leaving mid-hand | 付每家 {rules.escape_pays} × 底注 |")
    if rules.flower_pig_pays:
        rows.append(f"| 查花猪 a flower pig | 付每个非花猪 {rules.flower_pig_pays} × 底注 |")
    return rows


def kongs(rules: RuleSet) -> list[str]:
    """Kong money per payer, in 底注."""
    k = rules.kongs
    rows = ["| 杠 kong | 每家 × 底注 per payer | 谁付 who pays |", "|---|---|---|"]
    rows.append(f"| 明杠 / 直杠 from a discard | {k.ming} | {PAYERS[k.ming_payers]} |")
    rows.append(f"| 补杠 / 弯杠 added to a 碰 | {k.bu} | {PAYERS[k.bu_payers]} |")
    rows.append(f"| 暗杠 concealed | {k.an} | {PAYERS[k.an_payers]} |")
    for label, amount in (
        ("旋风杠 中发白", k.xuanfeng),
        ("每补一张箭牌 each dragon added to it", k.extra_dragon),
        ("叉宝 a 碰 of the treasure", k.treasure_peng),
        ("手中三张宝 three treasures in hand", k.treasure_triplet),
    ):
        if amount:
            rows.append(f"| {label} | {amount} | {PAYERS[KongPayers.OTHERS]} |")
    if k.big_faces and k.big_multiplier > 1:
        rows.append(f"| 大杠 a kong of 1m, 1p or 1s | × {k.big_multiplier} | |")
    if k.dealer_multiplier > 1:
        rows.append(f"| 杠随庄走 the dealer konging or paying | × {k.dealer_multiplier} | |")
    if k.anti_cheat_single_payer:
        rows.append("| 防作弊场 明杠 / 补杠 | | 点杠 / 点碰者 the seat that fed it, alone |")
    return rows


def facts(rules: RuleSet) -> list[str]:
    """What the table plays with and what a win needs."""
    rows = ["| 项目 item | |", "|---|---|"]
    rows.append(f"| 牌数 tiles | {4 * len(rules.faces)} |")
    rows.append(f"| 叫牌时限 claim window | {rules.claim_window:g} s |")
    rows.append(f"| 吃 chow (from the 上家) | {_yes(rules.chi)} |")
    rows.append(f"| 报听 declaring ready | {_yes(rules.declare_ready)} |")
    rows.append(f"| 定缺 a void suit | {_yes(rules.void_suit_choice)} |")
    rows.append(f"| 宝 treasure, 分张 | {_yes(rules.treasure)} |")
    rows.append(f"| 旋风杠 中发白 | {_yes(rules.xuanfeng)} |")
    rows.append(f"| 血战到底 play on after a win | {_yes(rules.bloody)} |")
    needs = [
        label
        for label, flag in (
            ("三门全 all three suits", rules.three_suits),
            ("幺九 a 1, 9 or honour", rules.terminal),
            ("一碰 a pung or kong", rules.pung),
            ("缺一门 no tile of the void suit", rules.void_suit),
        )
        if flag
    ]
    rows.append(f"| 胡牌要求 a win needs | {' · '.join(needs) or '—'} |")
    return rows


def platform(rules: RuleSet) -> list[str]:
    """The coin platform: rooms and fees, stakes by balance, titles by 积分."""
    rows = ["| 场 room | 台费 fee | 防作弊 anti-cheat |", "|---|---|---|"]
    for room in rules.rooms:
        rows.append(
            f"| {room.chinese} {room.name} | {room.fee_percent}% | {_yes(room.anti_cheat)} |"
        )
    rows += ["", "| 桌上最少余额 lowest balance seated | 底注 stake |", "|---|---|"]
    rows += [f"| {floor:,} | {stake:,} |" for floor, stake in STAKE_TIERS]
    rows += ["", "| 积分 points from | 称号 title |", "|---|---|"]
    rows += [f"| {threshold or 0:,} | {title} |" for threshold, title in RANKS]
    rows += [
        "",
        f"新账号送 {SIGNUP_GRANT:,} 金币 (同一地址每天前 {SIGNUP_GRANTS_PER_ADDRESS} 个账号);"
        f" 余额低于 {RELIEF_BELOW} 每天可领救济 {RELIEF}. A new account gets"
        f" {SIGNUP_GRANT:,} coins (the first {SIGNUP_GRANTS_PER_ADDRESS} accounts a UTC day"
        f" from one address; later ones start at 0, D89); below {RELIEF_BELOW} coins,"
        f" {RELIEF} coins of relief may be claimed once a UTC day.",
    ]
    return rows


KINDS: dict[str, Callable[[RuleSet], list[str]]] = {
    "facts": facts,
    "fans": fans,
    "payments": payments,
    "kongs": kongs,
    "platform": platform,
}


def render(name: str, text: str) -> str:
    """The page ``text`` with each generated block made anew from rule set ``name``."""
    rules = find_rules(name)

    def block(m: re.Match[str]) -> str:
        return m.group(1) + "\n".join(KINDS[m.group(2)](rules)) + "\n" + m.group(4)

    return BLOCK.sub(block, text)


def main() -> None:
    SERVED.mkdir(exist_ok=True)
    for name in NAMES:
        page = PAGES / f"{name}.md"
        text = render(name, page.read_text(encoding="utf-8"))
        page.write_text(text, encoding="utf-8")
        (SERVED / f"{name}.md").write_text(text, encoding="utf-8")
        print(f"wrote {page.relative_to(ROOT)} and its served copy")


if __name__ == "__main__":
    main()

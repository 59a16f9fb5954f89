"""Sichuan's end-of-hand checks at an exhausted wall (RULES.md §4.10)."""

from __future__ import annotations

from fangcheng.rules.ruleset import SICHUAN, Options
from fangcheng.scoring.payments import Transfer, deltas_of
from fangcheng.scoring.settlement import sichuan_exhaustion
from fangcheng.tiles.melds import Meld, MeldKind
from fangcheng.tiles.notation import parse_counts, parse_tiles


def hand(text: str) -> bytes:
    return bytes(parse_counts(text))


def test_example_s7_flower_pig_not_ready_and_refund():
    """EXAMPLES S7, event 3: D55 — 查花猪 pays winners too, 查大叫 at the best value, 退税."""
    five_s = tuple(parse_tiles("5s5s5s5s"))
    seats = [
        (hand("111m222m333m44m"), [Meld(MeldKind.PENG, tuple(parse_tiles("999m")), 1)]),
        (hand("1m2p3p4p5p6p7p8p9p1s2s3s4s"), []),  # S: 缺 m, yet holds 1m → 花猪
        (hand("123456999p22p67p"), []),  # W: waits 5p/8p, best 清一色 2 → 4
        (hand("1m3m5m7m9m1s3s7s9s2s"), [Meld(MeldKind.BU_GANG, five_s, 0)]),  # N: not ready
    ]
    kongs = [Transfer(payer, 3, 1, "刮风") for payer in (0, 1, 2)]
    que = Options(que=(2, 0, 0, 1))  # E s, S m, W m, N p
    result = sichuan_exhaustion(SICHUAN, que, 1, seats, won={0}, flagged=(), kong_transfers=kongs)
    reasons = [reason for reason, _ in result]
    assert [r.split()[0] for r in reasons] == ["查花猪", "查大叫", "退税"]
    by_reason = {r.split()[0]: deltas_of(t) for r, t in result}
    assert by_reason["查花猪"] == (16, -48, 16, 16)
    assert by_reason["查大叫"] == (0, 0, 4, -4)
    assert by_reason["退税"] == (1, 1, 1, -3)
    total = [sum(d[s] for d in by_reason.values()) for s in range(4)]
    assert total == [17, -47, 21, 9]


def test_d56_a_flagged_seat_is_a_flower_pig_even_without_its_void_suit():
    """D56: passing a win in the last four tiles makes a 花猪."""
    seats = [(hand("123456789m11p22p"), []) for _ in range(4)]
    que = Options(que=(2, 2, 2, 2))
    result = sichuan_exhaustion(SICHUAN, que, 1, seats, won=(), flagged={1}, kong_transfers=())
    pig = dict((r.split()[0], deltas_of(t)) for r, t in result)["查花猪"]
    assert pig == (16, -48, 16, 16)


def test_flower_pigs_neither_refund_nor_take_part_in_the_not_ready_check():
    """§4.10 item 3: 花猪不需要退还; 花猪 neither pay nor receive 查大叫."""
    seats = [
        (hand("1m2m3m4m5m6m7m8m9m1p2p3p5s"), []),  # pig (缺 s), not ready
        (hand("123456789m11p22p"), []),  # ready (清 m + p)
        (hand("1m3m5m7m9m2p4p6p8p1p3p5p7p"), []),  # not ready, no void tiles
        (hand("1m3m5m7m9m2p4p6p8p1p3p5p7p"), []),
    ]
    kongs = [Transfer(2, 0, 2, "下雨"), Transfer(1, 0, 2, "下雨")]
    que = Options(que=(2, 2, 2, 2))
    result = dict(
        (r.split()[0], deltas_of(t))
        for r, t in sichuan_exhaustion(SICHUAN, que, 1, seats, (), (), kongs)
    )
    assert result["查花猪"] == (-48, 16, 16, 16)
    assert result["查大叫"][0] == 0 and result["查大叫"][1] > 0
    assert "退税" not in result  # the only kong income is the pig's

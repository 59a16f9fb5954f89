"""The bots' measures in the compiled kernel (``bot_closest``, ``bot_useful``,
``bot_useful_after`` in ``_kernel.c``) against their Python code, the reference: the
same answers on seeded hands under every rule set, 缺 and laid melds, and the same
decisions in seeded hands played both ways."""

from __future__ import annotations

import random

import pytest

from fangcheng.engine.round import Round
from fangcheng.players import bots
from fangcheng.players.bots import _Memo, make_bot
from fangcheng.rules.ruleset import ALL_RULES, RuleSet, find_rules
from fangcheng.tiles.melds import Meld, MeldKind

built = pytest.mark.skipif(bots._KERNEL is None, reason="the compiled kernel was not built")
RULES = [r.name for r in ALL_RULES]


def _memos(rules: RuleSet, melds: tuple[Meld, ...], que: int | None) -> tuple[_Memo, _Memo]:
    """A memo measuring with the kernel, and one measuring in Python."""
    fast, slow = _Memo(rules, melds, que), _Memo(rules, melds, que)
    slow.kernel = None
    return fast, slow


def _hand(rng: random.Random, faces: tuple[int, ...], n: int) -> bytes:
    """``n`` tiles drawn from four copies of each face of ``faces``."""
    counts = bytearray(34)
    for t in rng.sample([t for t in faces for _ in range(4)], n):
        counts[t] += 1
    return bytes(counts)


#: Laid melds that leave different requirements open (三门全's suits, 么九, 必须有碰).
MELDS = (
    (),
    (Meld(MeldKind.PENG, (4, 4, 4)),),
    (Meld(MeldKind.CHI, (10, 11, 12)),),
    (Meld(MeldKind.CHI, (0, 1, 2)), Meld(MeldKind.PENG, (31, 31, 31))),
)


@built
@pytest.mark.parametrize("rules", RULES)
def test_the_kernel_measures_as_the_python_code_on_seeded_hands(rules: str) -> None:
    rule_set = find_rules(rules)
    rng = random.Random(rules)
    ques = (None, 0, 1, 2) if rule_set.void_suit else (None,)
    checked = 0
    for que in ques:
        for melds in MELDS:
            laid = sum(len(m.tiles) for m in melds) // 3
            fast, slow = _memos(rule_set, melds, que)
            for _ in range(150):
                h14 = _hand(rng, rule_set.faces, 14 - 3 * laid)
                held = [t for t in range(34) if h14[t]]
                faces = rng.sample(held, rng.randint(1, len(held)))
                closest = slow.closest(h14, faces)
                assert fast.closest(h14, faces) == closest, (list(h14), faces)
                best, close = closest
                unseen = bytes(rng.randint(0, 4) if t in rule_set.faces else 0 for t in range(34))
                if best > 0:  # as `ranked` asks (at the hands' distance; 0 is valued apart)
                    want = slow.useful_after(h14, close, best, unseen)
                    assert fast.useful_after(h14, close, best, unseen) == want
                # and at other distances, against the uncached Python code
                left = int.from_bytes(unseen)
                for d in range(max(1, best), best + 3):
                    counts = fast.useful_after(h14, close, d, unseen)
                    for t, count in zip(close, counts, strict=True):
                        less = bytearray(h14)
                        less[t] -= 1
                        h = bytes(less)
                        mask = slow.useful_worked(h, d)
                        assert bots._KERNEL.bot_useful(h, fast.profile, d) == mask, (list(h), d)
                        assert count == (left & 255 * int.from_bytes(mask)) % 255
                checked += 1
    assert checked >= 600


def _play(rules: str, seats: list[str], seed: int) -> list[object]:
    """Every action the seats choose in one seeded hand, and its settlement."""
    round_ = Round(rules, seed=seed, dealer=seed % 4)
    players = [make_bot(name, random.Random(seed * 10 + s)) for s, name in enumerate(seats)]
    chosen: list[object] = []
    while not round_.over:
        for s in round_.pending():
            action = players[s].act(round_.observe(s))
            chosen.append((s, action))
            round_.act(s, action)
    chosen.append(round_.settlement)
    return chosen


@built
@pytest.mark.parametrize("rules", RULES)
def test_bots_decide_the_same_with_the_kernel_and_without(
    rules: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for seats in (["efficient"] * 4, ["strong", "efficient", "efficient", "efficient"]):
        for seed in range(6):
            with_kernel = _play(rules, seats, seed)
            monkeypatch.setattr(bots, "_KERNEL", None)
            without = _play(rules, seats, seed)
            monkeypatch.undo()
            assert with_kernel == without, (seats, seed)

"""Issue 20: the observation encoders, compiled (``_encode.c``) and Python, give exactly
the tensor of the list-built encoder they replaced (kept here as the reference) for the
seats asked at every step of seeded random hands of every rule set, and for all four
seats at each hand's end; they write into a caller's buffer alike, and the legal mask is
the legal list. The compiled one names what is wrong with a malformed observation, and
without it the environment runs on Python and says so once."""

from __future__ import annotations

import random
import subprocess
import sys

import numpy as np
import pytest
from numpy.typing import NDArray

from fangcheng.ai import env as fenv
from fangcheng.ai.env import OBSERVATION_LAYOUT, encode_observation, legal_mask
from fangcheng.engine.round import Round
from fangcheng.protocol.observation import Observation, Phase
from fangcheng.tiles.melds import MeldKind
from fangcheng.tiles.notation import DRAGONS, KINDS
from test_env import TABLES  # every rule set and the platform's rooms, as the env tests

SEATS = 4
AT = {s.name: s.offset for s in OBSERVATION_LAYOUT}
SEAT_BLOCK = AT["seat1.river"] - AT["seat0.river"]
PHASES = {p: i for i, p in enumerate(Phase)}
HANDS = 200


def reference_encoding(obs: Observation, *, base: int = 1) -> NDArray[np.float32]:
    """The encoder as it was before the bytearray one (issue 20), kept as the reference."""
    v = [0.0] * fenv.OBSERVATION_SIZE
    at = AT
    me = obs.seat
    hand = obs.hand
    seen = list(hand)
    o = at["hand"]
    for t in range(KINDS):
        v[o + t] = float(hand[t])
    if obs.drawn is not None:
        v[at["drawn"] + obs.drawn] = 1.0
    for r in range(SEATS):
        view = obs.seats[(me + r) % SEATS]
        b = at["seat0.river"] + r * SEAT_BLOCK
        river = view.river
        for t in river:
            v[b + t] += 1.0
            seen[t] += 1
        recent = b + 34
        for k, t in enumerate(reversed(river[-4:])):
            v[recent + 34 * k + t] = 1.0
        for meld in view.melds:
            kind = meld.kind
            for t in meld.tiles:
                seen[t] += 1
            if kind is MeldKind.CHI:
                for t in meld.tiles:
                    v[b + 170 + t] += 1.0
            elif kind is MeldKind.PENG:
                v[b + 204 + meld.face] = 1.0
            elif kind is MeldKind.AN_GANG:
                v[b + 272 + meld.face] = 1.0
            elif kind is MeldKind.XUANFENG:
                for t in meld.tiles:
                    v[b + 306 + t - DRAGONS[0]] += 1.0
            else:  # 明杠, 补杠
                v[b + 238 + meld.face] = 1.0
        v[b + 309] = float(view.hidden_kongs)
        v[b + 310] = view.concealed / 14.0
        v[b + 311] = float(view.ready)
        v[b + 312] = float(view.won)
        if view.que is not None:
            v[b + 313 + view.que] = 1.0
        if view.piao in fenv.PIAO_BETS:
            v[b + 316 + fenv.PIAO_BETS.index(view.piao)] = 1.0
        x = obs.scores[(me + r) % SEATS] / base
        v[b + 319] = x / (abs(x) + 16.0)
    v[at["dealer"] + (obs.dealer - me) % SEATS] = 1.0
    v[at["turn"] + (obs.turn - me) % SEATS] = 1.0
    v[at["phase"] + PHASES[obs.phase]] = 1.0
    if obs.last_discard is not None:
        seat, tile = obs.last_discard
        v[at["claim_tile"] + tile] = 1.0
        v[at["claim_seat"] + (seat - me) % SEATS] = 1.0
    if obs.treasure is not None:
        v[at["treasure"] + obs.treasure] = 1.0
    o = at["retired"]
    for t in obs.retired:
        v[o + t] += 1.0
        seen[t] += 1
    rules = obs.rules
    in_play = rules.faces
    o = at["unseen"]
    for t in in_play:
        v[o + t] = float(max(0, 4 - seen[t]))
    v[at["wall"]] = min(1.0, obs.wall / (4 * len(in_play)))
    o = at["rules"]
    for k, feature in enumerate(fenv._RULE_FEATURES):
        v[o + k] = float(feature(rules))
    return np.array(v, dtype=np.float32)


compiled = pytest.mark.skipif(fenv._ENCODE is None, reason="the compiled encoder was not built")
ENCODERS = [pytest.param("compiled", marks=compiled), "python"]


@pytest.mark.parametrize("encoder", ENCODERS)
@pytest.mark.parametrize(("rules", "options", "base"), TABLES)
def test_the_encoding_equals_the_reference_at_every_step(
    rules: str, options: dict[str, object], base: int, encoder: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if encoder == "python":
        monkeypatch.setattr(fenv, "_ENCODE", None)
    rng = random.Random(20)
    buffer = np.full(fenv.OBSERVATION_SIZE, np.nan, np.float32)
    steps = 0
    for seed in range(HANDS):
        r = Round(rules, seed=seed, dealer=seed % SEATS, base=base, options=options)
        while True:
            for seat in r.pending() if not r.over else range(SEATS):
                obs = r.observe(seat)
                want = reference_encoding(obs, base=base)
                got = encode_observation(obs, base=base)
                assert got.dtype == np.float32
                assert np.array_equal(got, want), (rules, seed, seat, steps)
                mask = np.zeros(fenv.ACTION_SIZE, np.int8)
                mask[[fenv.action_to_index(a) for a in obs.legal]] = 1
                assert np.array_equal(legal_mask(obs.legal), mask)
            if r.over:
                assert encode_observation(obs, base=base, out=buffer) is buffer
                assert np.array_equal(buffer, want)
                break
            seat = r.pending()[0]
            r.act(seat, rng.choice(r.legal_actions(seat)))
            steps += 1
    assert steps > 50 * HANDS


def malformed(obs: Observation, **changes: object) -> Observation:
    return obs._replace(**changes)


@compiled
def test_the_compiled_encoder_names_what_is_wrong() -> None:
    r = Round("baicheng", seed=3)
    obs = r.observe(r.pending()[0])
    view = obs.seats[1]
    cases = {
        "tile 40 out of range": malformed(
            obs, seats=(obs.seats[0], view._replace(river=(40,)), *obs.seats[2:])
        ),
        "seat 7 out of range": malformed(obs, seat=7),
        "drawn tile 50 out of range": malformed(obs, drawn=50),
        "treasure -1 out of range": malformed(obs, treasure=-1),
        "a phase that is not a Phase": malformed(obs, phase="turn"),
        "a hand is 34 counts": malformed(obs, hand=bytes(33)),
        "four seats and four scores": malformed(obs, seats=obs.seats[:3]),
        "缺 suit 5 out of range": malformed(
            obs, seats=(obs.seats[0], view._replace(que=5), *obs.seats[2:])
        ),
    }
    for message, bad in cases.items():
        with pytest.raises(ValueError, match=message):
            encode_observation(bad)
    with pytest.raises(ValueError, match="float32 array of OBSERVATION_SIZE"):
        encode_observation(obs, out=np.zeros(fenv.OBSERVATION_SIZE, np.float64))
    # a good observation after the bad ones encodes as ever
    assert np.array_equal(encode_observation(obs), reference_encoding(obs))


@pytest.mark.parametrize("encoder", ENCODERS)
def test_a_score_in_units_of_a_zero_base_is_an_error_either_way(
    encoder: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if encoder == "python":
        monkeypatch.setattr(fenv, "_ENCODE", None)
    obs = Round("sichuan", seed=1).observe(0)
    assert np.array_equal(encode_observation(obs, base=0), reference_encoding(obs, base=1))
    with pytest.raises(ZeroDivisionError):
        encode_observation(obs._replace(scores=(2, -2, 0, 0)), base=0)


def test_without_the_compiled_encoder_the_env_runs_on_python_and_says_so_once() -> None:
    """As on a machine that had no C compiler at install: the module cannot be imported."""
    script = """
import sys
sys.modules["fangcheng.ai._encode"] = None  # import fails, as when never built
from fangcheng.ai import env
from fangcheng.ai.env import SingleSeatEnv
assert env._ENCODE is None
e = SingleSeatEnv("sichuan")
obs, _ = e.reset(seed=1)
assert obs["observation"].shape == (env.OBSERVATION_SIZE,)
"""
    done = subprocess.run(
        [sys.executable, "-W", "default", "-c", script], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("the compiled observation encoder was not built") == 1

"""The AI research API: PettingZoo's and Gymnasium's own checkers on every rule set,
random masked play with the reward and mask invariants, the action table, the documented
observation layout, determinism, and no hidden information in a seat's tensor."""

from __future__ import annotations

import copy
import random
import re
import warnings
from collections import Counter
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, render_test, seed_test

from fangcheng.ai import env as fenv
from fangcheng.ai.env import (
    ACTION_LAYOUT,
    ACTION_SIZE,
    OBSERVATION_LAYOUT,
    OBSERVATION_SIZE,
    FallbackOnIllegal,
    FangchengEnv,
    RandomPolicy,
    SingleSeatEnv,
    action_to_index,
    encode_observation,
    index_to_action,
    legal_mask,
)
from fangcheng.engine.round import Round
from fangcheng.protocol.actions import Act, Action, IllegalActionError
from fangcheng.protocol.observation import Observation, Phase

RULES = ["baicheng", "baishan", "baishan_platform", "sichuan"]
# (rules, table options, 底注): every rule set, and the platform's rooms at a base where
# their percentage fees come to whole coins
TABLES: list[tuple[str, dict[str, object], int]] = [
    ("baicheng", {}, 1),
    ("baishan", {}, 1),
    ("baishan_platform", {}, 100),
    ("baishan_platform", {"room": "anti_cheat"}, 100),
    ("sichuan", {}, 1),
]


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    """The checkers warn about things that are choices here (a Dict observation, no spec)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def section(name: str) -> slice:
    (s,) = [s for s in OBSERVATION_LAYOUT if s.name == name]
    return s.slice


def play_hand(e: FangchengEnv, seed: int, rng: random.Random) -> dict[str, Any]:
    """Masked random play of one hand through the AEC interface, checking as it goes."""
    e.reset(seed=seed)
    got = Counter[str]()
    actions = Counter[Act]()
    for agent in e.agent_iter():
        obs, reward, terminated, truncated, _ = e.last()
        assert obs is not None
        got[agent] += reward
        if terminated or truncated:
            e.step(None)
            continue
        r = e.round
        assert r is not None
        seat = e.possible_agents.index(agent)
        legal = r.legal_actions(seat)
        mask = obs["action_mask"]
        # the mask is exactly the legal list: one index per legal action, nothing else
        assert sorted(np.flatnonzero(mask).tolist()) == sorted(action_to_index(a) for a in legal)
        assert int(mask.sum()) == len(legal)
        for a in legal:
            assert index_to_action(action_to_index(a)) == a
        # a seat not asked has an empty mask
        for other in range(4):
            if other not in r.pending():
                assert not e.observe(e.possible_agents[other])["action_mask"].any()
        choice = rng.choice(legal)
        actions[choice.kind] += 1
        e.step(action_to_index(choice))
    assert not e.agents
    r = e.round
    assert r is not None and r.settlement is not None
    return {
        "rewards": [got[a] for a in e.possible_agents],
        "settlement": r.settlement,
        "actions": actions,
    }


@pytest.mark.parametrize("rules", RULES)
def test_pettingzoo_api_test(rules: str) -> None:
    for seed in range(3):
        wrapped = fenv.env(rules=rules)
        wrapped.reset(seed=seed)  # api_test's own resets then draw from this seed
        api_test(wrapped, num_cycles=1000)
    raw = fenv.raw_env(rules=rules, dealer=None)
    raw.reset(seed=99)
    api_test(raw, num_cycles=1000)


@pytest.mark.parametrize("rules", RULES)
def test_pettingzoo_seed_and_render_tests(rules: str, capsys: pytest.CaptureFixture[str]) -> None:
    seed_test(lambda: fenv.env(rules=rules), num_cycles=500)
    render_test(lambda render_mode=None: fenv.env(rules=rules, render_mode=render_mode))
    assert "seat" in capsys.readouterr().out  # "human" prints Observation.text()


@pytest.mark.parametrize(("rules", "options", "base"), TABLES)
def test_random_rollouts_pay_the_settlement_and_sum_to_minus_fees(
    rules: str, options: dict[str, object], base: int
) -> None:
    e = FangchengEnv(rules, options=options, dealer=None, base=base)
    rng = random.Random(f"{rules}{options}")
    kinds = Counter[Act]()
    fees_seen = 0
    for seed in range(12):
        hand = play_hand(e, seed, rng)
        settlement = hand["settlement"]
        assert hand["rewards"] == settlement["total"]
        assert sum(hand["rewards"]) == -sum(settlement["fees"])
        fees_seen += sum(settlement["fees"])
        kinds += hand["actions"]
    assert kinds[Act.DISCARD] and kinds[Act.PASS]
    if rules == "baishan_platform":
        assert fees_seen > 0  # the room's percentage was taken somewhere
    if rules == "baishan_platform":
        assert kinds[Act.PIAO] == 4 * 12
    if rules == "sichuan":
        assert kinds[Act.QUE] == 4 * 12


def test_reward_scale_and_sichuan_pays_during_the_hand() -> None:
    """Sichuan settles wins and kongs at once: rewards arrive before the last step. A
    negative scale too (the steps that pay nothing skip the reward loops: their
    rewards and sums must be what the loops would give)."""
    plain = FangchengEnv("sichuan")
    scaled = FangchengEnv("sichuan", reward_scale=0.5)
    negative = FangchengEnv("sichuan", reward_scale=-0.5)
    early = 0
    for seed in range(20):
        for e in (plain, scaled, negative):
            e.reset(seed=seed)
        rngs = [random.Random(seed) for _ in range(3)]
        while plain.agents:
            for e, rng in zip((plain, scaled, negative), rngs, strict=True):
                obs, *_, terminated, _, _ = e.last()
                if terminated:
                    e.step(None)
                else:
                    e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            assert {a: 0.5 * v for a, v in plain.rewards.items()} == scaled.rewards
            assert {a: -0.5 * v for a, v in plain.rewards.items()} == negative.rewards
            expected = {a: -0.5 * v for a, v in plain._cumulative_rewards.items()}
            assert expected == negative._cumulative_rewards
            if plain.round is not None and not plain.round.over:
                early += any(plain.rewards.values())
    assert early > 0


@pytest.mark.parametrize("rules", RULES)
def test_legal_actions_are_the_action_spaces_values(rules: str) -> None:
    """Every action the engine offers (漂 and 定缺 included) is the action space's own
    value, so that `Round.act` matches an index's action by identity."""
    for seed in range(5):
        r = Round(rules, seed=seed)
        rng = random.Random(seed)
        while not r.over:
            for seat in r.pending():
                legal = r.legal_actions(seat)
                for a in legal:
                    assert index_to_action(action_to_index(a)) is a
                r.act(seat, rng.choice(legal))


def test_every_index_round_trips_and_the_table_is_fixed() -> None:
    assert ACTION_SIZE == 237
    assert [name for name, _, _ in ACTION_LAYOUT] == [
        "discard", "ting", "chi", "peng", "gang", "angang", "bugang",
        "xuanfeng", "add", "hu", "pass", "que", "piao",
    ]  # fmt: skip
    seen = set()
    for i in range(ACTION_SIZE):
        a = index_to_action(i)
        assert action_to_index(a) == i
        assert Action.parse(str(a)) == a  # the table holds well-formed actions only
        seen.add(a)
    assert len(seen) == ACTION_SIZE
    assert action_to_index(Action.parse("discard 1m")) == 0
    assert action_to_index(Action.parse("ting C")) == 34 + 33
    assert action_to_index(Action.parse("chi 789s")) == 68 + 20
    assert action_to_index(Action.parse("add P")) == 226
    assert action_to_index(Action.parse("piao 10")) == 236
    for bad in (-1, ACTION_SIZE):
        with pytest.raises(ValueError, match="outside"):
            index_to_action(bad)
    with pytest.raises(ValueError, match="no index"):
        action_to_index(Action(Act.PIAO, value=7))
    assert legal_mask([]).shape == (ACTION_SIZE,) and legal_mask([]).dtype == np.int8
    # the engine's shared values are found by identity, other equal values by value
    shared, parsed = index_to_action(89 + 4), Action.parse("discard 3p")
    assert parsed is not index_to_action(9 + 2)
    assert np.flatnonzero(legal_mask([shared, parsed])).tolist() == [11, 93]
    with pytest.raises(ValueError, match="no index"):
        legal_mask([shared, Action(Act.PIAO, value=7)])


def _doc_rows() -> set[tuple[int, int, str]]:
    doc = fenv.__doc__ or ""
    rows = re.findall(r"^(\d+)\s+(\d+)\s+(?:``)?([a-z_]+)", doc, flags=re.MULTILINE)
    return {(int(o), int(s), n) for o, s, n in rows}


def test_the_docstring_tables_are_the_layouts() -> None:
    rows = _doc_rows()
    for name, offset, size in ACTION_LAYOUT:
        assert (offset, size, name) in rows, name
    block = OBSERVATION_LAYOUT[3].offset  # seat 0's block follows the own sections
    width = sum(s.size for s in OBSERVATION_LAYOUT if s.name.startswith("seat0."))
    for s in OBSERVATION_LAYOUT:
        if s.name.startswith("seat"):
            r = int(s.name[4])
            assert (s.offset - block - r * width, s.size, s.name[6:]) in rows, s.name
        else:
            assert (s.offset, s.size, s.name) in rows, s.name
    doc = fenv.__doc__ or ""
    assert f"Box(float32, ({OBSERVATION_SIZE},))" in doc
    assert f"Discrete({ACTION_SIZE})" in doc
    starts = ", ".join(str(block + r * width) for r in range(3))
    assert f"at {starts} and {block + 3 * width}" in doc


def test_observation_pieces_read_the_observation() -> None:
    r = Round("baicheng", seed=3, dealer=2)
    obs = r.observe(2)
    v = encode_observation(obs)
    assert v.shape == (OBSERVATION_SIZE,) and v.dtype == np.float32
    assert v[section("hand")].tolist() == list(obs.hand)
    assert v[section("seat0.concealed")][0] == pytest.approx(14 / 14)
    assert v[section("seat1.concealed")][0] == pytest.approx(13 / 14)
    assert v[section("dealer")].tolist() == [1, 0, 0, 0]
    assert v[section("phase")][list(Phase).index(Phase.TURN)] == 1
    assert v[section("rules")].tolist() == [1, 0, 0, 0]
    assert obs.treasure is not None and v[section("treasure")][obs.treasure] == 1
    unseen = v[section("unseen")]
    assert unseen[27:31].sum() == 0  # no winds in baicheng's set
    assert unseen.sum() == 120 - 14 - len(obs.retired)
    # seat 3 sees the dealer (seat 2) as its 上家, relative seat 3
    assert encode_observation(r.observe(3))[section("dealer")].tolist() == [0, 0, 0, 1]
    tile = next(t for t in range(34) if obs.hand[t])
    r.act(2, Action(Act.DISCARD, tile))
    for seat in (0, 1, 3):
        w = encode_observation(r.observe(seat))
        rel = (2 - seat) % 4
        assert w[section(f"seat{rel}.river")][tile] == 1
        assert w[section(f"seat{rel}.recent")][tile] == 1
        if r.phase is Phase.CLAIM:
            assert w[section("claim_tile")][tile] == 1
            assert w[section("claim_seat")][rel] == 1


def _shuffle_hidden(r: Round, keep: int, rng: random.Random) -> None:
    """Deal every tile ``keep`` cannot see afresh: the other seats' concealed tiles and
    the live wall, each seat keeping its count of tiles."""
    others = [s for s in range(4) if s != keep]
    pool = [t for s in others for t in range(34) for _ in range(r.hands[s][t])]
    pool += list(r.wall.live)
    rng.shuffle(pool)
    for s in others:
        n = sum(r.hands[s])
        r.hands[s] = bytearray(34)
        for t in pool[:n]:
            r.hands[s][t] += 1
        del pool[:n]
    assert len(pool) == len(r.wall.live)
    r.wall.live.clear()
    r.wall.live.extend(pool)


@pytest.mark.parametrize("rules", RULES)
def test_no_hidden_information_reaches_a_seat(rules: str) -> None:
    e = FangchengEnv(rules)
    rng = random.Random(rules)
    checked = 0
    for seed in range(3):
        e.reset(seed=seed)
        step = 0
        for _agent in e.agent_iter():
            obs, _, terminated, _, _ = e.last()
            if terminated:
                e.step(None)
                continue
            if step % 7 == 0:
                r = e.round
                assert r is not None
                for seat, name in enumerate(e.possible_agents):
                    before = e.observe(name)
                    other = copy.deepcopy(r)
                    _shuffle_hidden(other, seat, rng)
                    e.round = other
                    after = e.observe(name)
                    e.round = r
                    assert np.array_equal(before["observation"], after["observation"])
                    assert np.array_equal(before["action_mask"], after["action_mask"])
                    checked += 1
            step += 1
            assert obs is not None
            e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert checked > 20


def _claim_windows(rules: str, ask_all: bool) -> tuple[int, int]:
    """(claim windows, those that asked every seat still playing) over three random hands."""
    e = FangchengEnv(rules, ask_all=ask_all)
    windows = full = 0
    for seed in range(3):
        e.reset(seed=seed)
        rng = random.Random(seed)
        for agent in e.agent_iter():
            obs, _, terminated, _, _ = e.last()
            if terminated:
                e.step(None)
                continue
            r = e.round
            assert r is not None and obs is not None
            action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
            e.step(action)
            if action < 68 and r.phase is Phase.CLAIM:  # a discard (or 报听 discard)
                discarder = e.possible_agents.index(agent)
                playing = {(discarder + k) % 4 for k in (1, 2, 3)} - set(r.won)
                windows += 1
                full += set(r.pending()) == playing
    return windows, full


@pytest.mark.parametrize("rules", RULES)
def test_claim_windows_ask_every_seat_so_the_turn_order_hides_who_can_claim(rules: str) -> None:
    windows, full = _claim_windows(rules, ask_all=True)
    assert windows > 50 and full == windows
    windows, full = _claim_windows(rules, ask_all=False)  # the fast mode shows who can claim
    assert full < windows


@pytest.mark.parametrize("rules", RULES)
def test_seeded_hands_replay_exactly(rules: str) -> None:
    def trace(e: FangchengEnv) -> list[bytes]:
        out = []
        rng = random.Random(1)
        e.reset(seed=5)
        for _hand in range(2):  # the second hand's seed comes from the first's
            if _hand:
                e.reset()
            for agent in e.agent_iter():
                obs, reward, terminated, *_ = e.last()
                assert obs is not None
                out.append(obs["observation"].tobytes() + agent.encode() + str(reward).encode())
                if terminated:
                    e.step(None)
                else:
                    e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        return out

    assert trace(FangchengEnv(rules, dealer=None)) == trace(FangchengEnv(rules, dealer=None))


def test_illegal_actions() -> None:
    raw = FangchengEnv("baishan")
    raw.reset(seed=0)
    obs, *_ = raw.last()
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    before = (raw.agent_selection, dict(raw._cumulative_rewards), obs["observation"].tobytes())
    with pytest.raises(IllegalActionError, match="cannot"):
        raw.step(illegal)
    with pytest.raises(IllegalActionError):
        raw.step(None)
    with pytest.raises(ValueError, match="outside"):
        raw.step(ACTION_SIZE)
    obs, *_ = raw.last()
    assert before == (
        raw.agent_selection,
        raw._cumulative_rewards,
        obs["observation"].tobytes(),
    )  # a refused action changes nothing
    wrapped = fenv.env(rules="baishan", illegal_reward=-100.0)
    wrapped.reset(seed=0)
    offender = wrapped.agent_selection
    wrapped.step(illegal)  # PettingZoo's policy: the hand ends, the offender is penalised
    assert all(wrapped.terminations.values())
    assert wrapped._cumulative_rewards[offender] == -100.0


def _pettingzoo_wrapped(rules: str, illegal_reward: float) -> Any:
    """The raw environment in PettingZoo's three standard wrappers, which `env` replaced."""
    from pettingzoo.utils import wrappers

    wrapped = wrappers.TerminateIllegalWrapper(FangchengEnv(rules), illegal_reward=illegal_reward)
    return wrappers.OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(wrapped))


def _checked_trail(e: Any, seed: int) -> list[tuple[object, ...]]:
    """Every ``last()`` of a hand of random play that tries an illegal index now and then."""
    rng = random.Random(seed)
    e.reset(seed=seed)
    out: list[tuple[object, ...]] = []
    for agent in e.agent_iter():
        obs, reward, terminated, truncated, _ = e.last()
        mask = obs["action_mask"]
        seen = (obs["observation"].tobytes(), mask.tobytes())
        out.append((agent, *seen, reward, terminated, truncated))
        if terminated or truncated:
            e.step(None)
            continue
        pool = np.flatnonzero(mask == 0) if rng.random() < 0.02 else np.flatnonzero(mask)
        e.step(int(rng.choice(pool)))
    return out


@pytest.mark.parametrize("rules", RULES)
def test_the_checked_env_plays_as_pettingzoos_wrappers(rules: str) -> None:
    ended_by_illegal = 0
    for seed in range(6):
        ours = _checked_trail(fenv.env(rules=rules, illegal_reward=-7.0), seed)
        assert ours == _checked_trail(_pettingzoo_wrapped(rules, -7.0), seed)
        ended_by_illegal += -7.0 in [step[3] for step in ours]
    assert ended_by_illegal  # the illegal branch was taken


def test_the_checked_env_enforces_the_order() -> None:
    e = fenv.env(rules="baishan")
    for name in ("rewards", "terminations", "infos", "agent_selection", "agents", "num_agents"):
        with pytest.raises(AttributeError, match="before reset"):
            getattr(e, name)
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        e.nothing  # noqa: B018
    with pytest.raises(AssertionError, match="before step"):
        e.step(0)
    with pytest.raises(AssertionError, match="before agent_iter"):
        e.agent_iter()
    e.reset(seed=0)
    turns = iter(e.agent_iter())
    next(turns)
    with pytest.raises(AssertionError, match="step"):
        next(turns)  # not stepped in between
    with pytest.raises(TypeError):
        e.step(1.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="outside"):
        e.step(ACTION_SIZE)


def test_reset_options_choose_the_dealer() -> None:
    e = FangchengEnv("baishan")
    e.reset(seed=1, options={"dealer": 2})
    assert e.round is not None and e.round.dealer == 2 and e.agent_selection == "player_2"
    e.reset(seed=1, options={"options": 1})  # other keys are ignored (api_test passes one)
    assert e.round.dealer == 0
    with pytest.raises(ValueError, match="dealer"):
        e.reset(options={"dealer": 4})


def test_bad_arguments_are_named() -> None:
    with pytest.raises(ValueError, match="unknown rule set"):
        FangchengEnv("riichi")
    with pytest.raises(ValueError, match="room"):
        FangchengEnv("baishan_platform", options={"room": "vip"})
    with pytest.raises(ValueError, match="render_mode"):
        FangchengEnv(render_mode="rgb_array")
    with pytest.raises(ValueError, match="seat"):
        SingleSeatEnv(seat=4)
    with pytest.raises(ValueError, match="three"):
        SingleSeatEnv(opponents=["random", "random"])


# --- the Gymnasium single-seat environment -------------------------------------------


@pytest.mark.parametrize("rules", RULES)
def test_gymnasium_check_env(rules: str) -> None:
    """check_env steps unmasked samples, so it runs through the fallback wrapper."""
    check_env(FallbackOnIllegal(SingleSeatEnv(rules, seat=1)))
    check_env(FallbackOnIllegal(SingleSeatEnv(rules, seat=2, dealer=None, render_mode="ansi")))


class Counting:
    """A policy of the test's own: uniform random, counting its decisions."""

    def __init__(self, seed: int) -> None:
        self.inner = RandomPolicy(random.Random(seed))
        self.calls = 0

    def act(self, observation: Observation) -> Action:
        self.calls += 1
        assert observation.legal
        return self.inner.act(observation)


@pytest.mark.parametrize("rules", RULES)
def test_single_seat_rollouts_pay_the_settlement(rules: str) -> None:
    bot = Counting(0)
    g = SingleSeatEnv(rules, seat=3, opponents=["random", bot, "random"], dealer=None)
    rng = np.random.default_rng(0)
    results = []
    for seed in range(8):
        obs, _ = g.reset(seed=seed)
        total, terminated = 0.0, False
        while not terminated:
            assert obs["action_mask"].any()
            action = rng.choice(np.flatnonzero(obs["action_mask"]))
            obs, reward, terminated, truncated, info = g.step(action)
            assert not truncated
            total += float(reward)
        assert not obs["action_mask"].any()
        assert total == info["settlement"]["total"][3]
        results.append(total)
    assert bot.calls > 0
    with pytest.raises(RuntimeError, match="reset"):
        g.step(0)


def test_single_seat_with_the_bots_module() -> None:
    """Bot names are built by `fangcheng.players.bots.make_bot`, seeded from the episode seed."""
    pytest.importorskip("fangcheng.players.bots")
    g = SingleSeatEnv("baishan", opponents="efficient")
    h = SingleSeatEnv("baishan", opponents="efficient")
    obs, _ = g.reset(seed=11)
    same, _ = h.reset(seed=11)
    rng = random.Random(2)
    terminated = False
    while not terminated:
        assert np.array_equal(obs["observation"], same["observation"])
        action = rng.choice(np.flatnonzero(obs["action_mask"]).tolist())
        obs, reward, terminated, *_ = g.step(action)
        same, reward_h, *_ = h.step(action)
        assert reward == reward_h


class ActOnly:
    """A `RandomPolicy` seen only through ``act``: it is handed full observations."""

    def __init__(self, seed: int) -> None:
        self.inner = RandomPolicy(random.Random(seed))

    def act(self, observation: Observation) -> Action:
        return self.inner.act(observation)


@pytest.mark.parametrize("rules", RULES)
def test_opponents_that_choose_from_the_legal_actions_play_as_with_observations(
    rules: str,
) -> None:
    """`RandomPolicy.choose` (no observation built) decides as its ``act`` does: the same
    tensors, masks, rewards and record, hand after hand."""
    choosing = SingleSeatEnv(
        rules, seat=2, dealer=None, opponents=[RandomPolicy(random.Random(s)) for s in range(3)]
    )
    acting = SingleSeatEnv(rules, seat=2, dealer=None, opponents=[ActOnly(s) for s in range(3)])
    rng = random.Random(7)
    for seed in range(12):
        obs, _ = choosing.reset(seed=seed)
        same, _ = acting.reset(seed=seed)
        terminated = False
        while True:
            assert np.array_equal(obs["observation"], same["observation"])
            assert np.array_equal(obs["action_mask"], same["action_mask"])
            if terminated:
                break
            action = rng.choice(np.flatnonzero(obs["action_mask"]).tolist())
            obs, reward, terminated, _, info = choosing.step(action)
            same, reward_a, terminated_a, _, info_a = acting.step(action)
            assert (reward, terminated, info) == (reward_a, terminated_a, info_a)
        assert choosing.table._round().decisions == acting.table._round().decisions


def test_random_opponents_draw_as_the_bots_random_bot() -> None:
    """``"random"`` is `RandomPolicy`, whose choices are the bots module's random bot's
    from the same generator."""
    bots = pytest.importorskip("fangcheng.players.bots")
    g = SingleSeatEnv("sichuan")
    g.reset(seed=3)
    assert all(type(bot) is RandomPolicy for bot in g.bots.values())
    ours, theirs = RandomPolicy(random.Random(5)), bots.make_bot("random", random.Random(5))
    r = Round("sichuan", seed=5)
    while not r.over:
        seat = r.pending()[0]
        action = ours.choose(r.legal_actions(seat))
        assert action is theirs.act(r.observe(seat))
        r.act(seat, action)


def test_fallback_replaces_an_illegal_index_and_says_so() -> None:
    g = FallbackOnIllegal(SingleSeatEnv("sichuan"), penalty=-1.0)
    obs, _ = g.reset(seed=4)
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    fallback = g.fallback(obs["action_mask"])
    assert obs["action_mask"][fallback]
    after, reward, _, _, info = g.step(illegal)
    assert info["illegal_action"] == illegal
    strict = SingleSeatEnv("sichuan")
    strict.reset(seed=4)
    with pytest.raises(IllegalActionError):
        strict.step(illegal)
    expected, plain_reward, *_ = strict.step(fallback)
    assert np.array_equal(after["observation"], expected["observation"])
    assert float(reward) == float(plain_reward) - 1.0

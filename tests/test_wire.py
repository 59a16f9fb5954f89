"""The table protocol's frames and the observation's JSON (fangcheng.protocol.wire)."""

from __future__ import annotations

import json
import random

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fangcheng.engine.round import Round
from fangcheng.players.bots import make_bot
from fangcheng.protocol import events as ev
from fangcheng.protocol import wire
from fangcheng.protocol.actions import Act, Action
from fangcheng.protocol.observation import Observation, Phase, SeatView
from fangcheng.rules.ruleset import ALL_RULES, SICHUAN, configure, find_rules
from fangcheng.tiles.melds import Meld, MeldKind

RULES = ["baicheng", "baishan", "baishan_platform", "sichuan"]
PROPERTY = settings(
    derandomize=True, max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


# --- the observation's JSON ------------------------------------------------------------


def observations_of_a_hand(rules: str, seed: int, bot: str, ask_all: bool) -> list[Observation]:
    """Every seat's observation at every step of a hand played by ``bot``s, and at its end."""
    r = Round(rules, seed=seed, ask_all=ask_all)
    bots = [make_bot(bot, random.Random(seed * 4 + s)) for s in range(4)]
    seen = []
    while True:
        seen.extend(r.observe(s) for s in range(4))
        if r.over:
            return seen
        for s in r.pending():
            r.act(s, bots[s].act(r.observe(s)))


def round_trips(obs: Observation) -> bool:
    data = json.loads(json.dumps(wire.observation_json(obs), ensure_ascii=False))
    return wire.observation_from_json(data, obs.rules) == obs


@pytest.mark.parametrize("rules", RULES)
def test_observations_of_played_hands_round_trip_through_json(rules):
    for seed in range(6):
        bot = "random" if seed % 2 else "efficient"
        for obs in observations_of_a_hand(rules, seed, bot, ask_all=seed % 3 == 0):
            assert round_trips(obs), obs.text()


def test_a_seats_cached_notation_is_what_it_would_be_written_afresh():
    """`observation_data` keeps each seat's part by value across observations, hands and
    rule sets: what it writes is byte for byte what an empty cache writes."""
    seen = [o for rules in RULES for o in observations_of_a_hand(rules, 1, "efficient", True)]
    warm = [msgspec.json.encode(wire.observation_data(obs)) for obs in seen]
    for obs, text in zip(seen, warm, strict=True):
        wire._seat_data.cache_clear()
        assert msgspec.json.encode(wire.observation_data(obs)) == text


@settings(PROPERTY, max_examples=12)
@given(st.sampled_from(RULES), st.integers(0, 2**31), st.sampled_from(["random", "efficient"]))
def test_property_observations_of_any_seeded_hand_round_trip(rules, seed, bot):
    assert all(map(round_trips, observations_of_a_hand(rules, seed, bot, ask_all=True)))


def test_a_configured_rule_set_is_the_one_rebuilt():
    configured, _ = configure(SICHUAN, {"claim_window": 2, "cap": 3})
    obs = Round(configured, seed=1).observe(0)
    back = wire.observation_from_json(wire.observation_json(obs), configured)
    assert back == obs and back.rules.cap_fans == 3


TILES = st.integers(0, 33)
COUNTS = st.lists(st.integers(0, 4), min_size=34, max_size=34).map(bytes)
MELDS = st.builds(
    Meld,
    st.sampled_from(MeldKind),
    st.lists(TILES, min_size=3, max_size=6).map(tuple),
    st.none() | st.integers(0, 3),
    st.booleans(),
)
ACTIONS = st.sampled_from(
    [Action(kind, t) for kind in (Act.DISCARD, Act.READY, Act.PENG, Act.GANG) for t in range(34)]
    + [Action(kind, t) for kind in (Act.AN_GANG, Act.BU_GANG, Act.ADD) for t in range(27, 34)]
    + [Action(Act.CHI, run=(s, s + 1, s + 2)) for s in range(27) if s % 9 <= 6]
    + [Action(Act.QUE, value=v) for v in range(3)]
    + [Action(Act.PIAO, value=b) for b in (0, 5, 10)]
    + [Action(Act.HU), Action(Act.PASS), Action(Act.XUANFENG)]
)
SEAT_VIEWS = st.builds(
    SeatView,
    st.lists(MELDS, max_size=4).map(tuple),
    st.integers(0, 4),
    st.lists(TILES, max_size=30).map(tuple),
    st.integers(0, 14),
    st.booleans(),
    st.none() | st.integers(0, 2),
    st.booleans(),
    st.integers(0, 10),
    st.none() | COUNTS,
)
OBSERVATIONS = st.builds(
    Observation,
    st.integers(0, 3),
    st.sampled_from(ALL_RULES),
    st.sampled_from(Phase),
    st.integers(0, 3),
    st.integers(0, 3),
    st.integers(1, 100),
    st.integers(0, 136),
    st.none() | TILES,
    st.lists(TILES, max_size=6).map(tuple),
    COUNTS,
    st.none() | TILES,
    st.lists(SEAT_VIEWS, min_size=4, max_size=4).map(tuple),
    st.lists(st.integers(-(10**6), 10**6), min_size=4, max_size=4).map(tuple),
    st.none() | st.tuples(st.integers(0, 3), TILES),
    st.lists(ACTIONS, max_size=20).map(tuple),
    st.booleans(),
)


@settings(PROPERTY, max_examples=300)
@given(OBSERVATIONS)
def test_property_any_observation_round_trips(obs):
    """Every field, rare ones too (叉宝, a 旋风杠's extra dragons, must_win, 分张)."""
    assert round_trips(obs)


def test_the_json_writes_tiles_in_notation():
    obs = Round("baishan", seed=3).observe(0)
    data = wire.observation_json(obs)
    assert (data["rules"], data["phase"], data["hand"]) == ("baishan", "turn", "33489m3479p34sESS")
    assert data["seats"][1] == {
        **dict(melds=[], hidden_kongs=0, river="", concealed=13, ready=False, que=None),
        **dict(won=False, piao=0, revealed=None),
    }
    assert data["legal"] == [str(a) for a in obs.legal] and data["legal"][0].startswith("discard ")
    peng = obs.seats[0]._replace(melds=(Meld(MeldKind.PENG, (4, 4, 4), 2),))
    meld = wire.observation_json(obs._replace(seats=(peng, *obs.seats[1:])))["seats"][0]["melds"]
    assert meld == [{"kind": "peng", "tiles": "555m", "from": 2, "treasure": False}]


def good_observation() -> dict:
    return wire.observation_json(Round("sichuan", seed=5).observe(1))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(rules="baishan"), "rules: 'baishan' is not this table's (sichuan)"),
        (lambda d: d.update(wall=True), "wall: expected an integer, got bool True"),
        (lambda d: d.update(seat=4), "seat: 4 is out of range (0..3)"),
        (lambda d: d.update(seat=None), "seat: null (a spectator's view) is no seat's"),
        (lambda d: d["seats"][2].update(river="5x"), "seats[2].river: not tile notation"),
        (lambda d: d.update(hand="11111m"), "hand: "),
        (lambda d: d.update(legal=["discard 5m", "fly"]), "legal[1]: unknown action 'fly'"),
        (lambda d: d.update(seats=d["seats"][:3]), "seats: expected a list of at least 4 items"),
        (lambda d: d.pop("phase"), "phase: missing"),
        (lambda d: d.update(spy=1), "spy: unknown key"),
        (lambda d: d.update(last_discard=[1, "9z"]), "last_discard[1]: not one tile"),
    ],
)
def test_a_bad_observation_is_refused_naming_the_field(change, message):
    data = good_observation()
    change(data)
    with pytest.raises(wire.WireError) as refused:
        wire.observation_from_json(data, SICHUAN)
    assert str(refused.value).startswith(message), str(refused.value)


# --- client frames ---------------------------------------------------------------------

GOOD_CLIENT_FRAMES = [
    ({"type": "hello", "v": 1, "token": "t0ken", "table": "K7QF2M"}, wire.HelloFrame),
    ({"type": "act", "seq": 12, "action": "discard 5m"}, wire.ActFrame),
    ({"type": "act", "seq": 0, "action": "chi 345m"}, wire.ActFrame),
    ({"type": "act", "seq": 3, "action": "que p"}, wire.ActFrame),
    ({"type": "start", "fill": "strong"}, wire.StartFrame),
    ({"type": "start"}, wire.StartFrame),
    ({"type": "next"}, wire.NextFrame),
    ({"type": "leave"}, wire.LeaveFrame),
    ({"type": "auto", "on": True}, wire.AutoFrame),
    ({"type": "ping"}, wire.PingFrame),
    ({"type": "hint", "seq": 12}, wire.HintFrame),
]


@pytest.mark.parametrize(("data", "kind"), GOOD_CLIENT_FRAMES)
def test_every_client_frame_type_is_accepted_and_encodes_back(data, kind):
    frame = wire.decode_client(json.dumps(data).encode())
    assert type(frame) is kind
    assert wire.decode_client(wire.encode(frame)) == frame


def test_the_examples_cover_every_client_frame_type():
    assert {data["type"] for data, _ in GOOD_CLIENT_FRAMES} == set(wire.CLIENT_TYPES)


def test_an_act_frame_gives_its_action():
    frame = wire.decode_client(b'{"type": "act", "seq": 4, "action": "peng 5m"}')
    assert isinstance(frame, wire.ActFrame) and frame.parsed() == Action(Act.PENG, 4)


HELLO = '{"type": "hello", "v": 1, "token": "t", "table": "K7QF2M"'
BAD_CLIENT_FRAMES = [
    (
        '{"type": "act", "seq": true, "action": "hu"}',
        "malformed",
        "seq: expected an integer, got bool True",
    ),
    (
        '{"type": "act", "seq": "3", "action": "hu"}',
        "malformed",
        "seq: expected an integer, got str '3'",
    ),
    (
        '{"type": "act", "seq": 1.0, "action": "hu"}',
        "malformed",
        "seq: expected an integer, got float",
    ),
    ('{"type": "act", "seq": -1, "action": "hu"}', "malformed", "seq: -1 is out of range"),
    ('{"type": "act", "seq": 1}', "malformed", "action: missing"),
    ('{"type": "act", "seq": 1, "action": "fly 5m"}', "malformed", "action: unknown action 'fly'"),
    ('{"type": "act", "seq": 1, "action": "discard 5x"}', "malformed", "action: 'discard 5x': "),
    ('{"type": "act", "seq": 1, "action": ""}', "malformed", "action: 0 characters"),
    (
        '{"type": "act", "seq": 1, "action": "hu", "x": 1}',
        "malformed",
        "x: unknown key; valid: action, seq",
    ),
    ('{"type": "auto", "on": 1}', "malformed", "on: expected true or false, got int 1"),
    (
        '{"type": "start", "fill": "genius"}',
        "malformed",
        "fill: 'genius'; valid: efficient, expert, random, strong",
    ),
    ('{"type": "fly"}', "malformed", "type: 'fly' is not a frame type; valid: act, auto, hello, "),
    ('{"type": 3}', "malformed", "type: 3 is not a frame type"),
    (
        '{"seq": 3}',
        "malformed",
        "type: missing; valid: act, auto, hello, hint, leave, next, ping, start",
    ),
    ('{"type": "hint"}', "malformed", "seq: missing"),
    ('{"type": "hint", "seq": "3"}', "malformed", "seq: expected an integer, got str '3'"),
    ('{"type": "hint", "seq": 3, "tile": "5m"}', "malformed", "tile: unknown key; valid: seq"),
    ("[1, 2]", "malformed", "frame: expected an object, got a list"),
    ('"hello"', "malformed", "frame: expected an object, got a string"),
    ('{"type": "ping"', "malformed", "frame: the text is not JSON"),
    (HELLO.replace('"v": 1', '"v": 2') + "}", "version", "v: version 2 is not spoken here"),
    (HELLO.replace("K7QF2M", "K7-F2M") + "}", "malformed", "table: not a table code"),
    (HELLO.replace("K7QF2M", "K7QF2") + "}", "malformed", "table: not a table code"),
    (
        HELLO.replace('"t"', '"' + "t" * 300 + '"') + "}",
        "malformed",
        "token: 300 characters; at most 256",
    ),
    (HELLO.replace('"t"', '""') + "}", "malformed", "token: 0 characters"),
    ('{"type": "hello", "v": 1, "table": "K7QF2M"}', "malformed", "token: missing"),
    ('{"type": "ping", "pad": "' + "x" * 5000 + '"}', "too_big", "frame: 5027 bytes; at most 4096"),
]


@pytest.mark.parametrize(("raw", "code", "message"), BAD_CLIENT_FRAMES)
def test_a_bad_client_frame_is_refused_naming_the_field(raw, code, message):
    with pytest.raises(wire.WireError) as refused:
        wire.decode_client(raw)
    assert refused.value.code == code
    assert str(refused.value).startswith(message), str(refused.value)


def test_bytes_that_are_not_utf8_are_refused():
    with pytest.raises(wire.WireError, match=r"^frame: the text is not UTF-8: byte 0xff"):
        wire.decode_client(b'{"type": "ping"}\xff')


# --- tables ----------------------------------------------------------------------------


def test_table_settings_take_the_protocol_defaults():
    settings_ = wire.table_settings({})
    assert (settings_.rules, settings_.quan, settings_.claim_ms) == ("baishan", 1, None)
    assert (settings_.turn_ms, settings_.bank_ms) == (10_000, 20_000)  # D84
    assert (settings_.bots, settings_.outside_bots, settings_.spectators) == (True, False, True)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {"rules": "mahjong"},
            "rules: 'mahjong'; valid: baicheng, baishan, baishan_platform, sichuan",
        ),
        ({"quan": 0}, "quan: 0 is out of range (1..16)"),
        ({"quan": True}, "quan: expected an integer, got bool True"),
        ({"turn_ms": 10}, "turn_ms: 10 is out of range"),
        ({"bots": "yes"}, "bots: expected true or false, got str 'yes'"),
        (
            {"colour": "red"},
            "colour: unknown key; valid: bank_ms, between_ms, bot_ms, bots, claim_ms,",
        ),
    ],
)
def test_bad_table_settings_are_refused_naming_the_field(data, message):
    with pytest.raises(wire.WireError) as refused:
        wire.table_settings(data)
    assert str(refused.value).startswith(message), str(refused.value)


def table_info() -> wire.TableInfo:
    seats = (
        wire.SeatInfo(name="Ann", kind="person", connected=True),
        wire.SeatInfo(name="efficient", kind="bot", connected=True),
        wire.SeatInfo(name="my-bot", kind="outside", connected=False, auto=True),
        wire.SeatInfo(),
    )
    settings = wire.TableSettings(rules="sichuan", options={"cap": 3})
    return wire.TableInfo(
        code="K7QF2M",
        rules="sichuan",
        status="waiting",
        seats=seats,
        owner="Ann",
        settings=settings,
    )


def standings(scores) -> tuple[wire.Standing, ...]:
    order = sorted(range(4), key=lambda s: -scores[s])
    return tuple(
        wire.Standing(seat=s, name=f"seat {s}", score=scores[s], rank=k + 1)
        for k, s in enumerate(order)
    )


# --- server frames ---------------------------------------------------------------------


def server_frames() -> list[wire.ServerFrame]:
    r = Round("baicheng", seed=2, ask_all=True)
    obs = wire.observation_data(r.observe(r.pending()[0]))
    while not r.over:
        for s in r.pending():
            r.act(s, r.legal_actions(s)[0])
    assert r.settlement is not None
    return [
        wire.WelcomeFrame(seat=2, table=table_info()),
        wire.WelcomeFrame(seat=None, table=table_info()),
        wire.TableFrame(table=table_info()),
        wire.EventsFrame(hand=0, start=0, events=tuple(r.events_for(1))),
        wire.PromptFrame(
            seq=7, deadline=1_800_000_000_000, bank_ms=20_000, observation=obs, legal=obs.legal
        ),
        wire.ViewFrame(observation=obs),
        wire.HandEndFrame(
            hand=0, settlement=r.settlement, record=41, standings=standings(r.settlement["total"])
        ),
        wire.MatchEndFrame(standings=standings((3, -1, -1, -1))),
        wire.ErrorFrame(code="stale", message="seq 6 is not the open prompt's (7)", seq=6),
        wire.PongFrame(),
        wire.HintAnswerFrame(seq=7, action="discard 5m", why="向听 (shanten) 2"),
    ]


def test_every_server_frame_encodes_and_decodes_back():
    frames = server_frames()
    assert {f.__struct_config__.tag for f in frames} == {
        "welcome",
        "table",
        "events",
        "prompt",
        "view",
        "hand_end",
        "match_end",
        "error",
        "pong",
        "hint",
    }
    for frame in frames:
        text = wire.encode(frame)
        assert json.loads(text)["type"] == frame.__struct_config__.tag
        assert wire.decode_server(text) == frame


def test_a_client_reads_a_prompt_and_rebuilds_the_observation():
    r = Round("baishan_platform", seed=4)
    seat = r.pending()[0]
    obs = r.observe(seat)
    data = wire.observation_data(obs)
    text = wire.encode(
        wire.PromptFrame(seq=1, deadline=0, bank_ms=0, observation=data, legal=data.legal)
    )
    frame = wire.decode_server(text)
    assert isinstance(frame, wire.PromptFrame)
    assert wire.observation_from_data(frame.observation, find_rules("baishan_platform")) == obs


def test_a_server_frame_read_by_a_client_ignores_keys_a_later_server_adds():
    frame = wire.decode_server(b'{"type": "pong", "at": 5}')
    assert frame == wire.PongFrame()
    with pytest.raises(wire.WireError, match=r"^seq: expected an integer"):
        wire.decode_server(b'{"type": "error", "code": "stale", "message": "", "seq": "x"}')


def test_the_events_frame_carries_the_events_union():
    frame = wire.EventsFrame(hand=1, start=0, events=(ev.Draw(seat=1, tile=None),))
    back = wire.decode_server(wire.encode(frame))
    assert isinstance(back, wire.EventsFrame) and back.events == (ev.Draw(seat=1, tile=None),)
    assert msgspec.json.decode(wire.encode(frame))["events"] == [
        {"type": "draw", "seat": 1, "tile": None}
    ]


def test_a_table_as_the_server_describes_it_is_read():
    """The shape of `TableInfo` the table server sends (its settings nested)."""
    text = json.dumps(
        {
            "type": "welcome",
            "v": 1,
            "seat": 0,
            "table": {
                "code": "K7QF2M",
                "owner": "Ann",
                "rules": "sichuan",
                "settings": {
                    **dict(rules="sichuan", options={"cap": 3}, quan=1, claim_ms=5000),
                    **dict(turn_ms=10000, bank_ms=20000, bots=True, outside_bots=False),
                    **dict(spectators=True, public=True, bot_ms=500, between_ms=10000),
                },
                "status": "playing",
                "practice": False,
                "hand": 0,
                "quan": 1,
                "seats": [
                    {"name": "Ann", "kind": "person", "connected": True, "auto": False},
                    {"name": "strong bot", "kind": "bot", "connected": True, "auto": False},
                    {"name": None, "kind": None, "connected": False, "auto": False},
                    {"name": "outside bot", "kind": "outside", "connected": False, "auto": True},
                ],
                "scores": [0, 0, 0, 0],
            },
        }
    )
    frame = wire.decode_server(text)
    assert isinstance(frame, wire.WelcomeFrame) and frame.table.settings.options == {"cap": 3}
    assert frame.table.seats[3] == wire.SeatInfo(name="outside bot", kind="outside", auto=True)


def test_the_bot_kinds_a_table_may_seat_are_the_projects_bots():
    from fangcheng.players.bots import BOTS

    assert set(wire.BOT_KINDS) == set(BOTS)

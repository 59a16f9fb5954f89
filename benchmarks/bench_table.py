"""The table's own share of the server's CPU: seeded `Table`s played in this process by
bench_server's policy, no sockets, no log, every frame encoded as the server's writer
encodes it.

    .venv/bin/python benchmarks/bench_table.py [--hands N]

Prints the SHA-256 of every frame (a change that must leave the protocol's frames
byte-identical leaves it unchanged: compare trees by PYTHONPATH) and the CPU time per
action (`time.process_time`). Figures: benchmarks/RESULTS.md, "Server".
"""

from __future__ import annotations

import argparse
import hashlib
import time
from typing import Any

import msgspec

from bench_server import choose
from fangcheng.protocol.wire import TableSettings
from fangcheng.server.tables import Table

ENCODE = msgspec.json.Encoder()
T0 = 1_800_000_000_000  # the clock, ms: it never moves (no timer is due with bot_ms 0)


class Seat:
    """A seat's connection: keeps the encoded frames and the prompt to answer."""

    def __init__(self, seat: int, frames: list[bytes]) -> None:
        self.seat, self.frames = seat, frames
        self.prompt: dict[str, Any] | None = None

    def send(self, frame: dict[str, Any]) -> None:
        self.frames.append(ENCODE.encode(frame))
        if frame["type"] == "prompt":
            self.prompt = frame


def play(rules: str, seed: int, hands: int, frames: list[bytes]) -> int:
    """Four people play ``hands`` hands (the next dealt at once); the actions taken."""
    settings = TableSettings(rules=rules, quan=16, bot_ms=0, between_ms=0)
    table = Table(code="ABCDEF", owner=1, settings=settings, seed=seed, on_hand=lambda *_: 1)
    seats = []
    for person in range(1, 5):
        seat = Seat(table.sit(person, f"p{person}", "person"), frames)
        table.attach(seat, T0)
        seats.append(seat)
    table.start(1, "efficient", T0)
    actions = 0
    while table.hand < hands and table.status != "finished":
        open_ = [s for s in seats if s.prompt is not None]
        if not open_:
            break
        for s in open_:
            frame, s.prompt = s.prompt, None
            assert frame is not None
            prompt = table.prompts.get(s.seat)
            if prompt is None or prompt.seq != frame["seq"]:
                continue
            action = choose(list(frame["legal"]), frame["observation"].drawn)
            table.act(s.seat, frame["seq"], action, T0)
            actions += 1
    return actions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=3, help="hands a table plays")
    args = parser.parse_args()
    frames: list[bytes] = []
    start, actions = time.process_time(), 0
    for rules in ("baishan", "baicheng", "sichuan"):
        for seed in (1, 2):
            actions += play(rules, seed, args.hands, frames)
    used = time.process_time() - start
    digest = hashlib.sha256(b"\n".join(frames)).hexdigest()
    print(
        f"frames sha256 {digest}  {len(frames)} frames  {actions} actions"
        f"  {used / actions * 1e6:.0f} us of CPU an action"
    )


if __name__ == "__main__":
    main()

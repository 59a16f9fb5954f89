"""What a client reads and sends: actions, the redacted view of one seat, and the
events of a hand (redacted per seat by `for_seat`). Bots, the env, the terminal and the
table server read these types; none of them needs the engine's internals.
"""

from fangcheng.protocol.actions import (
    Act,
    Action,
    IllegalActionError,
    called_meld,
)
from fangcheng.protocol.events import Event, for_seat
from fangcheng.protocol.observation import (
    Observation,
    Phase,
    SeatView,
)

__all__ = [
    "Act",
    "Action",
    "Event",
    "IllegalActionError",
    "Observation",
    "Phase",
    "SeatView",
    "called_meld",
    "for_seat",
]

"""What a client reads and sends: actions, and the redacted view of one seat. Bots, the
env, the terminal and the table server read these types; none of them needs the engine's
internals.
"""

from fangcheng.protocol.actions import (
    Act,
    Action,
    IllegalActionError,
    called_meld,
)
from fangcheng.protocol.observation import (
    Observation,
    Phase,
    SeatView,
)

__all__ = [
    "Act",
    "Action",
    "IllegalActionError",
    "Observation",
    "Phase",
    "SeatView",
    "called_meld",
]

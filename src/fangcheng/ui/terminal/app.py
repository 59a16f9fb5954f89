"""The Textual application of ``fangcheng play``: one page, one message line, one prompt.

The page is the table while a hand is on, then the settlement, then (after the last
hand) the standings; ``help`` shows the keys. Everything is typed at the prompt, so the
app needs nothing but a keyboard and works the same under tmux; a resize redraws the
page for the new width. PageUp/PageDown scroll the table's log (a page taller than the
terminal otherwise). A mistyped command leaves the game as it was and says why on the
message line.

The bots play at ``pace`` seconds a move, on a Textual timer, so what happens between
two of the player's turns can be followed; with a pace of 0 (the tests) they play at
once. With a `ReplayView` the app is the replay viewer: Enter steps on, ``b`` back.
A ``hint`` is thought out on a worker thread (the expert's playouts take up to half a
second) and shown when it comes, unless the player has decided meanwhile.
"""

from __future__ import annotations

import os
from typing import ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.timer import Timer
from textual.widgets import Input, Label, Static

from fangcheng.ui.terminal.game import Game, InputError, ReplayView
from fangcheng.ui.terminal.view import (
    board,
    event_line,
    help_text,
    log_rows,
    settlement,
    standings,
)

__all__ = ["PlayApp"]

#: What the viewer's prompt takes.
VIEWER_KEYS = "Enter: next step · b: back · s: start · e: end · v: next seat's side · q: quit"


class PlayApp(App[None]):
    """Play ``game`` at the keyboard (or step through a `ReplayView`); tiles as notation
    with ``ascii``; the bots pause ``pace`` seconds after each move (the game must then
    be made ``paced``)."""

    CSS = """
    Screen { layout: vertical; }
    #view { height: 1fr; scrollbar-size-vertical: 1; }
    #message { height: auto; min-height: 1; max-height: 2; }
    #prompt { height: 1; }
    #prompt Label { width: 2; }
    #command { border: none; height: 1; padding: 0; width: 1fr; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f1", "help", "keys"),
        Binding("escape", "close_help", "back to the table", show=False),
        Binding("pageup", "page(-1)", "scroll up", show=False),
        Binding("pagedown", "page(1)", "scroll down", show=False),
    ]

    def __init__(
        self, game: Game, *, ascii: bool = False, color: bool = True, pace: float = 0.0
    ) -> None:
        if not color:
            os.environ["NO_COLOR"] = "1"  # read by Textual when the app is made
        super().__init__(ansi_color=True)
        self.game, self.ascii, self.pace = game, ascii, pace
        self.viewer = isinstance(game, ReplayView)
        self.log_lines: list[str] = []
        self.logged = 0  # events of the current hand already in the log
        self.back = 0  # log lines scrolled back from the latest
        self.page = "table"  # table, help, standings (a finished hand shows its settlement)
        self.quitting = False  # "q" was typed mid-match: the next answer decides
        self.timer: Timer | None = None
        self.message_rows = 1

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="view", can_focus=False):
            yield Static(id="page")
        yield Static(id="message")
        with Horizontal(id="prompt"):
            yield Label("> ")
            yield Input(id="command", placeholder="a key, then Enter (help: keys, hint)")

    def on_mount(self) -> None:
        self.title = "fangcheng play"
        self.query_one("#command", Input).focus()
        game = self.game
        if self.viewer:
            self.say(f"replay of {game.record} · {VIEWER_KEYS}")
        else:
            rules, quan = game.match.rules, game.match.quan
            self.say(
                f"{rules.name} {rules.chinese.split()[0]}: {quan} 圈 (round"
                f"{'s' if quan > 1 else ''} of deals) · tiles look like boxes? type ascii"
            )
        self.show()
        self.bots_play()

    def on_resize(self) -> None:
        self.call_later(self.show)  # once the app has taken the new size

    # --- the bots' moves ----------------------------------------------------------------

    def bots_play(self) -> None:
        """Let the bots move: at once without a pace, else one move per tick."""
        if self.viewer or not self.game.paced:
            return
        if self.pace <= 0:
            self.game.advance()
            self.show()
        elif self.timer is None:
            self.timer = self.set_interval(self.pace, self.tick)

    def tick(self) -> None:
        """One paced step: bot moves until one shows in the log (a claim window that
        every bot passes shows nothing), then stop when the player is asked."""
        game = self.game
        shown = len(self.log_lines)
        moved = game.step()
        self.show()
        while moved and len(self.log_lines) == shown:
            moved = game.step()
            self.show()
        if game.asked():
            self.stop_bots()

    def stop_bots(self) -> None:
        if self.timer is not None:
            self.timer.stop()
            self.timer = None

    # --- drawing ------------------------------------------------------------------------

    def show(self) -> None:
        """Redraw the page for the current state and width."""
        game = self.game
        events = game.events()
        if len(events) < self.logged:  # the viewer went back: write the log again
            self.log_lines, self.logged = [], 0
        for event in events[self.logged :]:
            line = event_line(game, event)
            if line is not None:
                self.log_lines.append(line)
        self.logged = len(events)
        width, height = self.table_size()
        if self.page == "help":
            page = Text(VIEWER_KEYS) if self.viewer else help_text()
        elif self.page == "standings":
            page = standings(game)
        elif game.round.over:
            footer = VIEWER_KEYS if self.viewer else None
            page = settlement(game, width, self.ascii, footer)
        else:
            page = board(
                game,
                self.log_lines,
                width,
                height,
                self.ascii,
                back=self.back,
                actions=not self.viewer,
            )
        self.query_one("#page", Static).update(page)
        view = self.query_one("#view", VerticalScroll)
        if self.page == "table" and not game.round.over:  # the hand and the keys in view
            view.anchor()
        else:
            view.anchor(False)
            view.scroll_home(animate=False, immediate=True)

    def say(self, text: str, error: bool = False) -> None:
        message = Text(text, style="bold red" if error else "")
        self.message_rows = 1 if message.cell_len <= self.size.width else 2
        self.query_one("#message", Static).update(message)

    def table_size(self) -> tuple[int, int]:
        """The width and height the table has: the terminal's less the message and prompt."""
        return max(40, self.size.width - 1), self.size.height - 1 - self.message_rows

    def action_help(self) -> None:
        self.page = "table" if self.page == "help" else "help"
        self.show()

    def action_close_help(self) -> None:
        if self.page == "help":
            self.page = "table"
            self.show()

    def action_page(self, direction: int) -> None:
        """Scroll the table's log by its height (a page that does not fit otherwise)."""
        game = self.game
        if self.page == "table" and not game.round.over:
            width, height = self.table_size()
            rows = log_rows(game, width, height, self.ascii, actions=not self.viewer)
            most = max(0, len(self.log_lines) - rows)
            self.back = max(0, min(most, self.back - direction * (rows - 1)))
            self.show()
            return
        view = self.query_one("#view", VerticalScroll)
        if direction < 0:
            view.scroll_page_up()
        else:
            view.scroll_page_down()

    # --- hints --------------------------------------------------------------------------

    def hint(self) -> None:
        """Ask for the expert's hint on a worker thread: its playouts (`TABLE_PLAYOUTS`)
        take up to half a second, which would freeze the screen and the prompt. It is
        shown when it comes, unless the player has decided meanwhile."""
        game = self.game
        try:
            make = game.hinter()
        except InputError as exc:
            self.say(str(exc), error=True)
            return
        at = game.decision()
        self.say("hint: thinking…")

        def work() -> None:
            text = make()
            self.call_from_thread(self.hinted, text, at)

        self.run_worker(work, thread=True, group="hint")

    def hinted(self, text: str, at: tuple[int, int]) -> None:
        """A hint made for the decision ``at``: shown if the player is still at it."""
        if self.game.decision() == at:
            self.say(text)

    # --- what is typed ------------------------------------------------------------------

    def on_input_submitted(self, event: Input.Submitted) -> None:
        text = event.value
        event.input.clear()
        self.say("")
        self.back = 0
        word = text.strip().lower()
        if self.quitting:
            self.quitting = False
            if word in ("y", "yes"):
                self.exit()
                return
            self.say("on with the game")
            self.show()
            return
        if word in ("q", "quit", "exit"):
            self.quit()
            return
        if word in ("help", "?"):
            self.action_help()
            return
        if word == "ascii":
            self.ascii = not self.ascii
            self.say("tiles as notation (ascii to go back)" if self.ascii else "tiles as glyphs")
            self.show()
            return
        if self.page == "help":
            self.page = "table"
            if not word:
                self.show()
                return
        if self.viewer:
            self.step_viewer(word)
        else:
            self.command(text, word)
        self.show()

    def quit(self) -> None:
        """Leave at once between matches or in the viewer; mid-match, ask first."""
        game = self.game
        if self.viewer or self.page == "standings" or game.match.over:
            self.exit()
            return
        self.quitting = True
        self.say("quit the match? the hand's record is saved · y: quit, Enter: play on")

    def step_viewer(self, word: str) -> None:
        game = self.game
        assert isinstance(game, ReplayView)
        steps = {"": game.at + 1, "n": game.at + 1, "b": game.at - 1, "s": 0}
        self.log_lines, self.logged = [], 0  # written again for the step or the side
        if word == "e":
            game.goto(len(game.moves) - 1)
        elif word == "v":
            game.side((game.seat + 1) % 4)
        elif word in steps:
            game.goto(steps[word])
        else:
            self.say(f"{word!r}: {VIEWER_KEYS}", error=True)
            return
        self.say(f"{game.where()} · {VIEWER_KEYS}")

    def command(self, text: str, word: str) -> None:
        """Carry out one line typed at the prompt."""
        game = self.game
        if self.page == "standings":
            self.exit()
        elif game.round.over:
            if game.match.over:
                self.page = "standings"
            else:
                game.next_hand()
                self.log_lines, self.logged = [], 0
                self.bots_play()
        elif word == "hint":
            self.hint()
        else:
            try:
                action = game.choose(text)
            except InputError as exc:
                self.say(str(exc), error=True)
                return
            game.play(action)
            self.bots_play()

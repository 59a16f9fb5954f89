"""The Textual application of ``fangcheng play``: one page, one message line, one prompt.

The page is the table while a hand is on, then the settlement, then (after the last
hand) the standings; ``help`` shows the keys. Everything is typed at the prompt, so the
app needs nothing but a keyboard and works the same under tmux; a resize redraws the
page for the new width, and a page taller than the terminal scrolls (PageUp/PageDown).
A mistyped command leaves the game as it was and says why on the message line.
"""

from __future__ import annotations

import os
from typing import ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Input, Label, Static

from fangcheng.ui.terminal.game import Game, InputError
from fangcheng.ui.terminal.view import board, event_line, help_text, settlement, standings

__all__ = ["PlayApp"]


class PlayApp(App[None]):
    """Play ``game`` at the keyboard; tiles as notation with ``ascii``."""

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
        Binding("pageup", "page(-1)", "scroll up", show=False),
        Binding("pagedown", "page(1)", "scroll down", show=False),
    ]

    def __init__(self, game: Game, *, ascii: bool = False, color: bool = True) -> None:
        if not color:
            os.environ["NO_COLOR"] = "1"  # read by Textual when the app is made
        super().__init__(ansi_color=True)
        self.game, self.ascii = game, ascii
        self.log_lines: list[str] = []
        self.logged = 0  # events of the current hand already in the log
        self.page = "table"  # table, help, standings (a finished hand shows its settlement)

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
        self.show()

    def on_resize(self) -> None:
        self.call_later(self.show)  # once the app has taken the new size

    def show(self) -> None:
        """Redraw the page for the current state and width."""
        game = self.game
        events = game.events()
        for event in events[self.logged :]:
            line = event_line(game, event)
            if line is not None:
                self.log_lines.append(line)
        self.logged = len(events)
        if self.page == "help":
            page = help_text()
        elif self.page == "standings":
            page = standings(game)
        elif game.round.over:
            page = settlement(game, max(40, self.size.width - 1), self.ascii)
        else:
            width, height = max(40, self.size.width - 1), self.size.height - 2
            page = board(game, self.log_lines, width, height, self.ascii)
        self.query_one("#page", Static).update(page)
        view = self.query_one("#view", VerticalScroll)
        if self.page == "table" and not game.round.over:  # the hand and the keys in view
            view.anchor()
        else:
            view.anchor(False)
            view.scroll_home(animate=False, immediate=True)

    def say(self, text: str, error: bool = False) -> None:
        self.query_one("#message", Static).update(Text(text, style="bold red" if error else ""))

    def action_help(self) -> None:
        self.page = "table" if self.page == "help" else "help"
        self.show()

    def action_page(self, direction: int) -> None:
        view = self.query_one("#view", VerticalScroll)
        if direction < 0:
            view.scroll_page_up()
        else:
            view.scroll_page_down()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        text = event.value
        event.input.clear()
        self.say("")
        word = text.strip().lower()
        if word in ("quit", "exit"):
            self.exit()
            return
        if word in ("help", "?"):
            self.action_help()
            return
        if self.page == "help":
            self.page = "table"
            if not word:
                self.show()
                return
        self.command(text, word)
        self.show()

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
        elif word == "hint":
            self.say(game.hint())
        else:
            try:
                action = game.choose(text)
            except InputError as exc:
                self.say(str(exc), error=True)
                return
            game.play(action)

"""UI first: background Python work gives way to the UI thread while a key waits for its frame
(issue 41, keypress while a question runs).

The engine's run worker and the KB's tagging warm-up are pure-Python threads; with the 1 ms
switch interval (mrptui/switch_interval.py) the UI thread still gets only its round-robin share
of the interpreter's lock, so a key's ~16 ms of UI work took ~4× that in wall time while a run
was live. Python has no thread priorities, so this is a cooperative one: the app marks the UI
urgent when input reaches it, and those threads call `pause` at their pause points (between a
run's trace events, between sentences tagged), where they wait until the app has painted a frame
after handling that input. UI work that can wait (a live render of the run's new events) waits
on the UI thread the same way: it is put off until that frame is painted (`holding_s`,
`after_answer`), so the key's frame is not a live render's too. Every wait is bounded
(`UI_FIRST_BOUND_S`: a key that paints nothing, or a stuck UI, holds the engine once for that
long, never for good), a cancel wakes it (`wake`), and a closed gate (the app quitting) never
waits.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from textual import events
from textual.app import App
from textual.message import Message
from textual.screen import Screen
from textual.widget import Widget

# Seconds a pause point waits at most for one burst of input to be answered: a panel key's frame
# takes ~15-25 ms of UI work, so this leaves room for a loaded machine while a key that paints
# nothing costs the engine one tenth of a second, once.
UI_FIRST_BOUND_S = 0.1


def _never() -> bool:
    return False


class UiFirst:
    """The app's input counts and the pause point background threads call. `arrived`, `handled`
    and `painted` are called on the UI thread; `pause` from any other."""

    def __init__(self, bound_s: float = UI_FIRST_BOUND_S) -> None:
        self.bound_s = bound_s
        self._cond = threading.Condition()
        self._ui_thread = threading.get_ident()
        self._arrived = 0  # inputs that reached the app
        self._handled = 0  # of those, how many the app has dispatched
        self._answered = 0  # of those, how many a frame painted after their dispatch answered
        self._since = 0.0  # time.monotonic() when the oldest unanswered input arrived
        self._closed = False
        self._after: dict[Callable[[], object], None] = {}  # called once the pending input is answered
        self.waited_s = 0.0  # what the pause points waited in all (how much the gate costs the engine)

    @property
    def urgent(self) -> bool:
        return self._answered < self._arrived and not self._closed

    def arrived(self) -> None:
        """Input reached the app: pause points wait from now on."""
        with self._cond:
            if not self.urgent:
                self._since = time.monotonic()
            self._arrived += 1

    def handled(self) -> None:
        """The app has dispatched one input: the next frame painted answers it."""
        with self._cond:
            self._handled = min(self._handled + 1, self._arrived)

    def painted(self) -> None:
        """A frame reached the screen: the inputs dispatched before it are answered."""
        if self._answered >= self._handled:
            return
        with self._cond:
            self._answered = self._handled
            self._since = time.monotonic()
            self._cond.notify_all()
        if not self.urgent:
            self._call_after()

    def holding_s(self) -> float:
        """On the UI thread: how much longer work that can wait should wait for the pending input's
        frame (0: none pending, or its burst's bound has passed, which then counts it answered)."""
        if not self.urgent:
            return 0.0
        left = self._since + self.bound_s - time.monotonic()
        if left > 0:
            return left
        with self._cond:
            self._answered = self._handled = self._arrived
            self._cond.notify_all()
        self._call_after()
        return 0.0

    def after_answer(self, callback: Callable[[], object]) -> None:
        """On the UI thread: call `callback` once the pending input is answered (from inside the
        frame that answers it: the callback should only schedule work; a bound that passes calls
        it from `holding_s`, and a closed gate drops it)."""
        self._after[callback] = None

    def _call_after(self) -> None:
        after, self._after = self._after, {}
        for callback in after:
            callback()

    def wake(self) -> None:
        """Something a waiting pause point checks changed (a cancel): let it look again."""
        with self._cond:
            self._cond.notify_all()

    def close(self) -> None:
        """The app quits: no pause point waits again."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._after.clear()

    def pause(self, cancelled: Callable[[], bool] = _never) -> None:
        """A background thread's pause point: return at once unless input waits for its frame;
        then wait until it is painted, `cancelled()` is true, or the burst's bound has passed (its
        inputs then count as answered, so the next pause point does not wait for them again)."""
        if not self.urgent or threading.get_ident() == self._ui_thread:
            return
        started = time.monotonic()
        with self._cond:
            while self.urgent and not cancelled():
                left = self._since + self.bound_s - time.monotonic()
                if left <= 0:
                    self._answered = self._handled = self._arrived
                    break
                self._cond.wait(left)
            self.waited_s += time.monotonic() - started


def is_input(message: Message) -> bool:
    """A key, a paste, a click or a scroll: what the engine gives way to. Not a mouse move: a
    pointer crossing the screen would hold the engine for every frame its hover paints."""
    return isinstance(message, events.Key | events.Paste | events.MouseEvent) and not isinstance(
        message, events.MouseMove
    )


def input_in_flight(app: App) -> bool:
    """A key the app forwarded to the focused widget is on its way back up (the app's bindings
    run when it bubbles back): a frame painted meanwhile does not answer it yet."""
    focused = app.focused
    pumps = [app, app.screen, *(focused.ancestors_with_self if focused is not None else ())]
    return any(is_input(queued) for pump in pumps for queued in pump._message_queue.values)


class PaintsInputAtOnce(Screen[None]):
    """A screen that paints the frame answering a key as soon as it is idle with something to
    paint, once the key has gone up through it to the app, the app's bindings have run, and the
    widgets a focus move touched have restyled. Textual paints from a timer at a fixed 60 a
    second: a key handled within 1/60 s of the last frame waited for the next slot, and the slot
    after a focus move's second frame, or after a live render's, was the next key's (the op
    presses keys 0-20 ms after each frame). Other frames, and keys a widget keeps (typing), keep
    the timer's pace."""

    _input_went_up = False  # a key went up through this screen since the last frame
    _focus_moved: tuple[Widget | None, ...] = ()  # the widgets the last focus move blurred and focused

    async def _on_key(self, event: events.Key) -> None:
        self._input_went_up = True  # Widget's own handler runs next (the screen's `key_` methods)

    def set_focus(self, widget: Widget | None, scroll_visible: bool = True, from_app_focus: bool = False) -> None:
        self._focus_moved = (self.focused, widget)
        super().set_focus(widget, scroll_visible, from_app_focus)

    def _shows_the_key(self) -> bool:
        """The key has reached the app (its bindings ran) and the focus move's Blur and Focus have
        been handled (each restyles its widget): a frame now shows what the key did."""
        moved = (widget for widget in self._focus_moved if widget is not None)
        return not input_in_flight(self.app) and all(widget._message_queue.empty() for widget in moved)

    async def _on_idle(self, event: events.Idle) -> None:
        dirty = self._layout_required or self._scroll_required or self._repaint_required or self._dirty_widgets
        if self._input_went_up and dirty and self.is_current and not self.app._batch_count and self._shows_the_key():
            self._on_timer_update()
        # Screen's own handler runs next: with nothing left to paint it calls what waited for a refresh.

    def _on_timer_update(self) -> None:
        self._input_went_up = False  # any frame shows what the key changed so far
        self._focus_moved = ()
        super()._on_timer_update()

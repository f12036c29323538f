"""UI first (mrptui/ui_first.py): while a key waits for its frame the engine worker waits at its
pause point between events and a live render waits for that frame too; a cancel still stops the
run at once, and no wait outlives its bound."""

from __future__ import annotations

import threading
import time

import pytest
from conftest import make_app
from fake_runs import thinkingdb_run
from fakes import FakeSession
from helpers import record_frames, settle, until
from textual import events

from core.kernel.contract import Request
from mrptui import run_driver
from mrptui.ui_first import UiFirst

SIZE = (160, 45)
EVENT_S = 0.003  # the slow engine's pure-Python work per event: it wants the GIL all the time


def _spin(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


class SlowSession(FakeSession):
    """The canned run, its events a stretch of pure-Python work apart (or of `between`, e.g. a
    sleep where the engine need not hold the GIL), again and again until cancelled; `resumed` is
    when the engine went on after each event."""

    def __init__(self, rounds: int = 400, between=_spin) -> None:
        super().__init__()
        self.rounds = rounds
        self.between = between
        self.resumed: list[float] = []

    def run(self, request: Request, steering=None):
        script = thinkingdb_run(request)
        middle = script[1:-1]
        yield script[0]
        for _ in range(self.rounds):
            for event in middle:
                self.resumed.append(time.perf_counter())
                if steering is not None and steering.cancelled:
                    return
                self.between(EVENT_S)
                yield event
        yield script[-1]


async def _live_run(app, pilot, session: SlowSession) -> None:
    app.main.action_panel("attempts")
    await pilot.pause()
    app.runner.start_run(Request(question="what runs the airflow?", caller=app.caller))
    await until(pilot, lambda: len(session.resumed) >= 5)


@pytest.mark.paints  # the key's frame is what lets the engine go on
async def test_a_key_pressed_while_a_run_is_live_is_painted_before_the_engine_goes_on() -> None:
    session = SlowSession()
    app = make_app(session)
    app.ui_first.bound_s = 30.0  # the frame, not the bound, must let the engine go on
    frames = record_frames(app, time.perf_counter)
    arrivals: list[float] = []
    arrived = app.ui_first.arrived

    def arriving() -> None:
        arrivals.append(time.perf_counter())
        arrived()

    app.ui_first.arrived = arriving  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _live_run(app, pilot, session)
        for key, panel in (("1", "plan"), ("3", "evidence"), ("4", "proofs"), ("2", "attempts")):
            target = app.main.query_one(f"#{panel}")
            seen, known = len(frames), len(arrivals)
            app._driver.send_message(events.Key(key, key))  # as the terminal driver delivers it
            await until(pilot, lambda: any(focused is target for _, focused in frames[seen:]))
            painted = next(when for when, focused in frames[seen:] if focused is target)
            reached = arrivals[known]  # the key reached the app (before that the engine may go on)
            went_on = [round((when - reached) * 1000, 1) for when in session.resumed if reached < when < painted]
            assert not went_on, (
                f"key {key}: the engine went on at {went_on} ms, its frame at {(painted - reached) * 1000:.1f}"
            )
            assert app.control.is_live
        assert app.ui_first.waited_s > 0
        app.control.cancel()
        await settle(pilot)


@pytest.mark.paints
async def test_a_live_render_waits_for_the_frame_of_a_key_pressed_meanwhile(monkeypatch) -> None:
    """The key's frame paints the key alone; the run's new events are rendered right after it."""
    monkeypatch.setattr(run_driver, "LIVE_RENDER_GAP_S", 0.0)  # a live render queued at every event
    session = SlowSession()
    app = make_app(session)
    app.ui_first.bound_s = 30.0  # the frame, not the bound, must let the render go on
    timeline: list[tuple[str, object]] = []  # ("arrived" | "render", None) and ("frame", focused), in order
    display, refresh_view, arrived = app._display, app.runner.refresh_view, app.ui_first.arrived

    def painting(screen, update) -> None:
        display(screen, update)
        if update is not None and not app._batch_count:
            timeline.append(("frame", app.focused))

    def rendering() -> None:
        timeline.append(("render", None))
        refresh_view()

    def arriving() -> None:
        timeline.append(("arrived", None))
        arrived()

    app._display = painting  # type: ignore[method-assign]
    app.runner.refresh_view = rendering  # type: ignore[method-assign]
    app.ui_first.arrived = arriving  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _live_run(app, pilot, session)
        for key, panel in (("1", "plan"), ("3", "evidence"), ("4", "proofs"), ("2", "attempts")):
            target = app.main.query_one(f"#{panel}")
            seen = len(timeline)
            app._driver.send_message(events.Key(key, key))
            await until(pilot, lambda: ("frame", target) in timeline[seen:])
            reached, answered = timeline.index(("arrived", None), seen), timeline.index(("frame", target), seen)
            assert ("render", None) not in timeline[reached:answered], f"key {key}: {timeline[reached : answered + 1]}"
            await until(pilot, lambda: ("render", None) in timeline[answered:])  # then the run is shown
            assert app.control.is_live
        app.control.cancel()
        await settle(pilot)


async def test_a_cancel_stops_a_run_waiting_at_its_pause_point() -> None:
    session = SlowSession()
    app = make_app(session)
    app.ui_first.bound_s = 30.0
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _live_run(app, pilot, session)
        app.ui_first.arrived()  # input that no frame answers: the engine waits for the bound
        waiting = len(session.resumed)
        await pilot.pause(0.2)
        assert len(session.resumed) <= waiting + 1 and app.control.is_live
        cancelled = time.monotonic()
        app.runner.cancel()
        await until(pilot, lambda: not app.control.is_live, seconds=10)
        assert time.monotonic() - cancelled < 5
        assert app.current.done
        await settle(pilot)


def _waiter(gate: UiFirst, cancelled=lambda: False) -> tuple[threading.Thread, list[float]]:
    took: list[float] = []

    def work() -> None:
        started = time.monotonic()
        gate.pause(cancelled)
        took.append(time.monotonic() - started)

    thread = threading.Thread(target=work)
    thread.start()
    return thread, took


def test_a_pause_point_goes_on_at_once_when_nothing_waits_and_on_the_ui_thread() -> None:
    gate = UiFirst(bound_s=30.0)
    thread, took = _waiter(gate)
    thread.join(5)
    assert took and took[0] < 1
    gate.arrived()
    gate.pause()  # the UI thread itself never waits for its own frame
    assert gate.urgent


def test_a_frame_after_the_input_was_handled_lets_the_pause_point_go() -> None:
    gate = UiFirst(bound_s=30.0)
    gate.arrived()
    thread, took = _waiter(gate)
    gate.painted()  # a frame before the input was dispatched does not answer it
    thread.join(0.2)
    assert thread.is_alive()
    gate.handled()
    gate.painted()
    thread.join(5)
    assert took and took[0] < 5 and not gate.urgent


def test_an_unanswered_input_holds_the_pause_point_once_for_the_bound_only() -> None:
    gate = UiFirst(bound_s=0.2)
    gate.arrived()
    thread, took = _waiter(gate)
    thread.join(5)
    assert took and 0.15 < took[0] < 5
    again, took_again = _waiter(gate)  # the expired input counts as answered
    again.join(5)
    assert took_again and took_again[0] < 0.1


def test_closing_and_cancelling_let_a_waiting_pause_point_go() -> None:
    gate = UiFirst(bound_s=30.0)
    gate.arrived()
    stop = threading.Event()
    cancelled_one, took = _waiter(gate, stop.is_set)
    stop.set()
    gate.wake()
    cancelled_one.join(5)
    closed_one, took_closed = _waiter(gate)
    gate.close()
    closed_one.join(5)
    assert took and took[0] < 5 and took_closed and took_closed[0] < 5


def test_work_put_off_for_input_runs_after_the_frame_that_answers_it() -> None:
    gate = UiFirst(bound_s=30.0)
    called: list[str] = []
    assert gate.holding_s() == 0
    gate.arrived()
    assert 29 < gate.holding_s() <= 30
    gate.after_answer(lambda: called.append("render"))
    gate.painted()  # before the input was dispatched: not its frame
    assert not called
    gate.handled()
    gate.painted()
    assert called == ["render"] and gate.holding_s() == 0
    gate.painted()
    assert called == ["render"]  # once


def test_work_put_off_for_input_that_paints_nothing_waits_for_the_bound_only() -> None:
    gate = UiFirst(bound_s=0.05)
    called: list[str] = []
    gate.arrived()
    gate.handled()
    gate.after_answer(lambda: called.append("render"))
    time.sleep(0.06)
    assert gate.holding_s() == 0 and called == ["render"] and not gate.urgent
    closed = UiFirst(bound_s=30.0)
    closed.arrived()
    closed.after_answer(lambda: called.append("closed"))
    closed.close()
    assert closed.holding_s() == 0 and called == ["render"]

"""`mrptui memory list|add|forget|clear`: the caller's conversation memory and durable notes."""

from __future__ import annotations

import argparse
import json
import time

from mrptui.commands import (
    UsageError,
    add_caller_options,
    add_session_options,
    caller_from_args,
    conversation_name,
    open_conversation,
    open_session,
    warn_memory,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action",
        choices=("list", "add", "forget", "clear"),
        help="list records; add a note; forget one record by id; clear a scope",
    )
    parser.add_argument("text", nargs="?", help="add: the note's text; forget: the record id")
    parser.add_argument("--session", metavar="NAME", help="the conversation (as `ask --session NAME`)")
    parser.add_argument(
        "--for",
        dest="question",
        metavar="QUESTION",
        help="list: score every record for this question (sim, recency, scope, quality, score)",
    )
    parser.add_argument("--notes", action="store_true", help="clear: the durable notes (not a conversation)")
    parser.add_argument("--json", action="store_true", help="list: one JSON object")
    add_session_options(parser)
    add_caller_options(parser, keep_top_level=True)


def run(args: argparse.Namespace) -> int:
    if args.action == "clear" and not (args.session or args.notes):
        raise UsageError("memory clear needs --session NAME (that conversation) or --notes (your durable notes)")
    if args.action in ("add", "forget") and not (args.text or "").strip():
        raise UsageError(f"memory {args.action} needs {'the note text' if args.action == 'add' else 'a record id'}")
    conversation_name(args.session)
    session = open_session(args)
    caller = caller_from_args(args)
    conversation = open_conversation(session, caller, args.session)
    try:
        return _act(conversation, session, caller, args)
    finally:
        warn_memory(conversation)


def _act(conversation, session, caller, args: argparse.Namespace) -> int:
    """The action; 1 when it had to change a file that could not be changed (the warning says why)."""
    if args.action == "add":
        record = conversation.note(args.text.strip())
        if record is None:
            return 1
        print(f"noted {record.id}")
    elif args.action == "forget":
        if conversation.forget(args.text.strip()):
            print(f"forgot {args.text.strip()}")
        elif any(r.id == args.text.strip() for r in conversation.records):
            return 1
        else:
            raise UsageError(f"no memory record {args.text.strip()} for this caller{_in(args)}")
    elif args.action == "clear":
        count = conversation.clear("user" if args.notes else "session")
        if count is None:
            return 1
        print(f"cleared {count} note(s)" if args.notes else f"cleared {count} record(s){_in(args)}")
    else:
        _list(conversation, session.view(caller), args)
    return 0


UNCHECKED = "not checked: it cites units, and no --kb names the KB it was asked against"


def _checked_against(args: argparse.Namespace) -> str | None:
    """The KB the records are checked against: only one the user named (the sample KB a bare
    command opens is not the one a conversation was asked against, and every turn then read as
    citing a unit no longer in the view)."""
    return ", ".join(args.kb) if getattr(args, "kb", None) else None


def _in(args: argparse.Namespace) -> str:
    return f" in conversation {args.session}" if args.session else ""


def _list(conversation, view, args: argparse.Namespace) -> None:
    against = _checked_against(args)
    if against is not None:
        usable, withheld = conversation.vetted(view)
    else:  # fail closed: a record that cites units is shown only once they are checked
        from core.memory.cited import withheld_note

        usable = [record for record in conversation.records if not record.unit_ids]
        withheld = [withheld_note(r.kind, r.turn, UNCHECKED) for r in conversation.records if r.unit_ids]
    scored = conversation.score(args.question or "", usable)
    rows = [
        {
            "id": s.record.id,
            "scope": s.record.scope,
            "kind": s.record.kind,
            "turn": s.record.turn,
            "age_s": round(max(0.0, time.time() - s.record.ts), 1),
            "question": s.record.question,
            "lead": s.record.lead,
            "entity": s.record.entity,
            **(
                {
                    "sim": round(s.sim, 4),
                    "recency": round(s.recency, 4),
                    "scope_weight": s.scope_weight,
                    "quality": round(s.quality, 4),
                    "score": round(s.score, 4),
                }
                if args.question
                else {}
            ),
        }
        for s in scored
    ]
    if not args.question:
        rows.sort(key=lambda r: (r["scope"] != "session", r["turn"], -r["age_s"]))
    if args.json:
        problems = [p.model_dump(mode="json") for p in conversation.problems]
        print(
            json.dumps(
                {
                    "conversation": args.session,
                    "checked_against": against,
                    "records": rows,
                    "withheld": withheld,
                    "problems": problems,
                },
                indent=2,
                ensure_ascii=False,
            )
        )
        return
    print(
        f"checked against the KB {against}"
        if against is not None
        else "not checked against a KB: pass --kb PATH (the KB the conversation asked) to list the turns that cite units"
    )
    if not rows and not withheld:
        print("no memory records for this caller" + _in(args))
    for line in withheld:
        print(line)
    for row in rows:
        score = (
            f"  score {row['score']:.2f} (sim {row['sim']:.2f} R {row['recency']:.2f} "
            f"S {row['scope_weight']:.1f} Q {row['quality']:.2f})"
            if args.question
            else ""
        )
        where = f"turn {row['turn']}" if row["scope"] == "session" else "note"
        lead = f" → {row['lead']}" if row["lead"] else ""
        print(f"{row['id']}  {row['kind']:<7} {where:<8} {row['question']}{lead}{score}")

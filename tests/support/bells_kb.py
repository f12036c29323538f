"""A small KB in bell founding and change ringing, a domain unlike the sample KB's: bodies of
several sentences (claim windows), numbered and bulleted steps, hyphens, possessives."""

from __future__ import annotations

from core.units import KnowledgeUnit, Role

BELLS = [
    (
        Role.DEFINITION,
        "Bell metal",
        "Bell metal is a bronze of about four parts copper to one part tin. "
        "It rings longer than brass! Founders call the alloy's grain its voice.",
    ),
    (
        Role.PROCEDURE,
        "Tuning a cast bell",
        "1. Clamp the bell mouth-up on the vertical lathe.\n"
        "2. Shave bronze from the inner waist, a little at a time.\n3. Strike it; listen for the hum-note.",
    ),
    (
        Role.EXPLANATION,
        "Strike note",
        "The strike note is heard, not measured. It sits an octave above the "
        "hum. A flat tierce makes the bell sound mournful? Minor-third partials are expected in "
        "English rings.",
    ),
    (
        Role.PROCEDURE,
        "Ringing rounds",
        "- Catch the sally on the handstroke.\n- Pull through to the backstroke.\n"
        "- Check the rope's sight before the treble leads off.",
    ),
    (
        Role.COMPARISON,
        "Loam versus sand moulds",
        "Loam moulds are strickled by hand around a core; sand moulds "
        "are rammed in flasks. Loam suits one-off tenor bells.",
    ),
    (Role.DIAGNOSTIC, "Cracked crown", "A cracked crown staple rattles. Ringers hear a buzz after the blow."),
    (Role.DEFINITION, "Clapper", "The clapper (or tongue) swings inside the bell."),
    (
        Role.EXPLANATION,
        "Headstock",
        "Elm headstocks were replaced by cast-iron ones: they do not rot... "
        "Ball bearings followed in the 1930s. Gudgeons sit in the frame's pits.",
    ),
]


def bell_units(source: str, copies: int) -> list[KnowledgeUnit]:
    units = []
    for copy in range(copies):
        for n, (role, topic, body) in enumerate(BELLS):
            text = body if copy == 0 else f"{body} Foundry ledger {copy}."
            units.append(
                KnowledgeUnit(
                    id=f"{source}::chunk-{copy:03d}::unit-{n:03d}",
                    source_id=source,
                    chunk_id=f"{source}::chunk-{copy:03d}",
                    role=role,
                    topic=topic,
                    **({"procedure": text} if role is Role.PROCEDURE else {"claim": text}),
                )
            )
    return units

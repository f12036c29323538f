"""How large an input may be before it is read: each cap is chosen so that any input under it
stays within about 1 GB of memory for one `ask`, cold cache included, measured with the CLI
(docs/formats.md, "Size caps"). A cap that refuses says so at the file (and line), by name."""

from pydantic import BaseModel, ConfigDict, Field


class InputCaps(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    # A Markdown, SOP or plain-text file. The worst case per byte is one line of distinct words
    # (3.99 MB, 507k words: 0.48 GB peak for a cold ask).
    max_file_bytes: int = Field(default=4_000_000, ge=1_000, le=16_000_000)
    # A JSON Lines file, read a piece of `pieceDocuments` lines at a time.
    max_jsonl_bytes: int = Field(default=64_000_000, ge=1_000, le=256_000_000)
    # Lines of a JSON Lines file: a short document costs ~1.3 KB over a cold ask (1,266,495 of
    # them in 63.9 MB: 1.79 GB; 500,000: 0.97 GB), so a file stops being read here, with an error
    # at this line.
    max_jsonl_lines: int = Field(default=400_000, ge=1, le=10_000_000)
    # One JSON Lines document: as large as a whole text file may be, for the same reason.
    max_jsonl_line_chars: int = Field(default=4_000_000, ge=100, le=16_000_000)
    # Problems listed per file, and per unit; past it one more says how many were left out. A
    # 3.6 MB file of 600,000 unknown field lines listed each (with a "did you mean"): 35 s CPU and
    # 0.97 GB for a cold `ask`, 1.18 GB and 38 MB of output for `check`.
    max_problems: int = Field(default=1_000, ge=10, le=1_000_000)
    # Documents (or units of a group of small files) turned into a segment at a time: the
    # units of one piece are alive together (about 2.6 KB each), the rest already stored as JSON.
    piece_units: int = Field(default=20_000, ge=100, le=1_000_000)


CAPS = InputCaps()

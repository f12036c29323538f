"""ThinkingDB (seed 004, DESIGN §9, §14): bounded positive Horn closure over unit triples.

`ThinkingDB.build` runs once per KB view (`facts`): symbols and relations are interned to ints,
facts live in numpy arrays, and the indexes every query reads are built there and never per query.
A query
  1. resolves seed facts and walks forward to the neighbourhood its rules may read (`seeds`),
  2. runs a semi-naive fixpoint over that neighbourhood under the limits and budgets, keeping the
     best proof of each derived fact (`closure`, over the local fact table in `table`),
  3. builds proof trees and ranks the original units by the best derivation they take part in
     (`proofs`). No synthetic unit ever leaves the package.
"""

from core.retrieval.thinkingdb.facts import FactIndexes, ThinkingDB
from core.retrieval.thinkingdb.results import Proof, RuleStats, StopReason, TdbResult

__all__ = ["FactIndexes", "Proof", "RuleStats", "StopReason", "TdbResult", "ThinkingDB"]

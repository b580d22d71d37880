"""The checker's verdicts are the reference's (`reference.verdict`): one vocabulary."""

from reference.verdict import HOLDS, Holds, Unknown, Verdict, Violated, verdict_name

__all__ = ["HOLDS", "Holds", "Unknown", "Verdict", "Violated", "verdict_name"]

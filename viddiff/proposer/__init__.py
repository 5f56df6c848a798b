"""Stage 1: propose differences and sub-action stages, and link them."""

from viddiff.proposer.propose import Proposer

__all__ = ["Proposer"]

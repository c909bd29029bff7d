"""Procurement cases: the buyer's answers, the advice on them and the checklist."""

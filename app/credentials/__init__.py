"""Credential checks: facts, rule runs, verdicts, per-item verification, evidence, lookups, watch."""

"""Identifier parsing and reference tables used to vet GPU rental providers."""

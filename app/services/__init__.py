"""Services: keyword-only functions that join inputs to the database; no Flask imports."""

"""Provider website and official-lookup scrapers: pure parse functions, no Flask imports."""

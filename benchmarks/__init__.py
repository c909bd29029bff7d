"""Trial-server benchmarks over SSH: runner, probes and pure output parsers, no Flask imports."""

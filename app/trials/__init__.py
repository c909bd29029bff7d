"""Trial servers and what was measured on them: runs, hand uploads, figures, campaigns, multi-node runs."""

"""Trial servers and what was measured on them: runs, hand uploads, figures, campaigns, multi-node runs."""

# Imported with the package: its after-flush hook writes a run's figures however the run is stored.
from app.trials import bench_figures as bench_figures

"""Infrastructure every package stands on: settings, database, jobs, errors, clock, limits, guards, audit."""

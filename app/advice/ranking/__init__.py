"""Rank the registry's offers against a case: hard constraints exclude (with the reason), criteria score.

Constraints and criteria are registries (registry): a new one is a decorated function, not another branch,
that declares the offer_table columns it reads. Every figure an offer is judged on carries its source
(measured / verified / claimed / assumed / estimated), and a measured figure always beats the provider's
claim (figures).

The package judges and explains one offer (run.assess, run.score); app.advice.deciding runs the same checks
once per distinct combination of their columns to rank every offer at once. The checks register on import,
in the order they run: the provider's first, then the offer's, then the measured evidence.
"""

# isort: off
from app.advice.ranking import provider_checks  # noqa: F401
from app.advice.ranking import constraints  # noqa: F401
from app.advice.ranking import evidence  # noqa: F401
from app.advice.ranking import criteria  # noqa: F401
# isort: on

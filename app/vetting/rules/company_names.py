"""Red flag 5: the company name on a licence or filing differs from the registered legal name.

Names are compared after folding (see _common.fold_name): full-width characters become half-width
(so "（" equals "("), spaces and listed punctuation are dropped, square brackets become round ones, and
"有限责任公司" counts as "有限公司". Anything else that differs is reported: a branch, an old name or a
different company all need a person to look.
"""

from __future__ import annotations

from collections.abc import Iterator

from app.vetting.findings import Finding, RuleContext, rule
from app.vetting.rules._common import fold_name, label, number_of, record_finding, registry


@rule("names.mismatch", title_zh="公司名称不一致", title_en="Company names differ", red_flag=5)
def names_mismatch(context: RuleContext) -> Iterator[Finding]:
    """Licence company names and filing entity names against the registered legal name."""
    provider = context.provider
    legal = fold_name(provider.legal_name, context.knowledge)
    records = [("licence", "licence", r, r.company_name, "company_name") for r in provider.licences]
    records += [
        (str(getattr(r.kind, "value", r.kind) or "filing"), "filing", r, r.entity_name, "entity_name")
        for r in provider.filings
    ]
    for kind, entity, record, name, field in records:
        if not name or fold_name(name, context.knowledge) == legal:
            continue
        number = number_of(record)
        yield record_finding(
            context,
            "names.mismatch",
            entity,
            record,
            (field, name),
            evidence=[registry("provider", provider.id, "legal_name", provider.legal_name)],
            record=f"{label(context, 'records', kind, 'zh')} {number} ",
            record_en=f"{label(context, 'records', kind, 'en')} {number}",
            name=name,
            legal_name=provider.legal_name,
        )

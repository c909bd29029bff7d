"""How the questionnaire reads an identifier: folded to its canonical form and parsed, or refused with why."""

from __future__ import annotations

import re
import unicodedata

from flask_babel import gettext as _

from app.core import provinces
from app.vetting.identifier_common import Identifier
from app.vetting.identifiers import identify
from app.vetting.uscc import parse_uscc

KIND_NAMES = {
    "licence": "增值电信业务经营许可证号",
    "icp_filing": "ICP 备案号",
    "icp_licence": "ICP 证编号",
    "psb_filing": "公网安备号",
    "uscc": "统一社会信用代码",
}


_PROVINCE_PREFIX = re.compile(r"^(?P<prefix>[\u3400-\u9fff]{2,8}?)(?=[A-Z][0-9]|ICP|公网安备)")


def fold_identifier(text: str) -> str:
    """Full-width to ASCII and a province name or alias before the number to its abbreviation."""
    folded = "".join(unicodedata.normalize("NFKC", text).split())
    match = _PROVINCE_PREFIX.match(folded)
    if match:
        province = provinces.lookup(match.group("prefix"))
        if province is not None:
            folded = province.abbreviation + folded[match.end() :]
    return folded


def _refuse(ident: Identifier) -> ValueError:
    return ValueError("；".join(ident.problems) or _("无法识别的编号"))


def parse_identifier(text: str, kinds: tuple[str, ...]) -> str:
    """The normalised identifier when `text` parses validly as one of `kinds`; a ValueError otherwise."""
    ident = identify(fold_identifier(text))
    if ident.kind not in kinds:
        names = "、".join(_(KIND_NAMES.get(kind, kind)) for kind in kinds)
        raise ValueError(
            _("编号类型不符：应为 %(kinds)s；%(problems)s", kinds=names, problems=_refuse(ident))
        )
    if not ident.valid or not ident.normalized:
        raise _refuse(ident)
    return ident.normalized


def parse_uscc_text(text: str) -> str:
    """The 18-character credit code with its check character verified; a ValueError otherwise."""
    ident = parse_uscc(unicodedata.normalize("NFKC", text))
    if not ident.valid or not ident.normalized:
        raise _refuse(ident)
    return ident.normalized

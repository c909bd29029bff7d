"""SQLModel tables and their input/output models; importing this registers every table.

Every module of this package is imported here, so a new table module needs no registration line.
"""

from app.core.plugins import import_submodules
from app.models.audit import AuditEntry
from app.models.credit import CreditRecord as CreditRecord
from app.models.provider import Certification, Datacenter, Filing, Licence, Offer, Provider
from app.models.user import ApiToken, LoginFailure, User

import_submodules(__name__)

__all__ = [
    "ApiToken",
    "AuditEntry",
    "Certification",
    "Datacenter",
    "Filing",
    "Licence",
    "LoginFailure",
    "Offer",
    "Provider",
    "User",
]

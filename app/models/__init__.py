"""SQLModel tables and their input/output models; importing this registers every table."""

from app.models.audit import AuditEntry
from app.models.provider import Certification, Datacenter, Filing, Licence, Offer, Provider
from app.models.user import ApiToken, User

__all__ = [
    "ApiToken",
    "AuditEntry",
    "Certification",
    "Datacenter",
    "Filing",
    "Licence",
    "Offer",
    "Provider",
    "User",
]

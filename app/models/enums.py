"""Enumerations shared by the tables, the validators and the pages."""

from enum import StrEnum


class Severity(StrEnum):
    """How much a finding weighs in the verdict."""

    blocker = "blocker"
    warning = "warning"
    info = "info"


class Verdict(StrEnum):
    """Overall result of a check run."""

    passed = "pass"
    needs_review = "needs_review"
    failed = "fail"


class ProviderStatus(StrEnum):
    """Where a provider stands in procurement."""

    candidate = "candidate"
    approved = "approved"
    rejected = "rejected"
    suspended = "suspended"


class LicenceStatus(StrEnum):
    """Status values the official licence query reports."""

    normal = "正常"
    revoked = "撤销"
    invalid = "无效"
    withdrawn = "吊销"
    cancelled = "注销"
    expired = "过期"


class FilingKind(StrEnum):
    """Kinds of filing numbers a provider displays."""

    icp_filing = "icp_filing"
    icp_licence = "icp_licence"
    psb_filing = "psb_filing"


class CertificationKind(StrEnum):
    """Certifications buyers ask for."""

    iso9001 = "iso9001"
    iso27001 = "iso27001"
    dengbao = "dengbao"
    other = "other"


class OfferKind(StrEnum):
    """How the GPUs are rented out; decides which licence items are needed."""

    bare_metal = "bare_metal"
    cloud_instance = "cloud_instance"
    colocation = "colocation"


class RdmaType(StrEnum):
    """Node-to-node RDMA fabric."""

    none = "none"
    roce = "roce"
    infiniband = "infiniband"


class BandwidthType(StrEnum):
    """Whether public bandwidth is dedicated to the customer."""

    dedicated = "dedicated"
    shared = "shared"
    unknown = "unknown"


class StorageType(StrEnum):
    """Where the offer's data disk lives."""

    local_nvme = "local_nvme"
    local_sata_ssd = "local_sata_ssd"
    cloud_disk = "cloud_disk"
    nfs = "nfs"
    parallel_fs = "parallel_fs"
    unknown = "unknown"


class Role(StrEnum):
    """Account roles, in increasing power."""

    viewer = "viewer"
    analyst = "analyst"
    approver = "approver"  # an analyst who may also approve procurement decisions
    admin = "admin"


ROLE_RANK = {Role.viewer: 0, Role.analyst: 1, Role.approver: 2, Role.admin: 3}

BUSINESS_ITEMS = ("B11", "B12", "B13", "B14", "B21", "B22", "B23", "B24", "B25", "B26")

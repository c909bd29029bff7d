"""The figures an offer is judged on: each one's best source, what it is compared with, where it is."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from app.advice import cities, sizing
from app.advice.facts import ASSUMED, CLAIMED, SOURCE_LABELS, UNKNOWN, Measurement, OfferFacts
from app.advice.knowledge import assumptions
from app.advice.offer_table import SOURCE_CODES, OfferTable
from app.advice.requirements import Needs, latency_constants
from benchmarks.compare import model_key


class Figure(NamedTuple):
    """A number an offer is judged on, and where it came from."""

    key: str
    value: Any
    unit: str
    source: str
    link: str | None = None
    note: str = ""
    run_id: int | None = None
    measured_on: str | None = None
    stale: bool = False
    origin: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form with the source spelled out in both languages."""
        zh, en = SOURCE_LABELS[self.source]
        value = round(self.value, 3) if isinstance(self.value, float) else self.value
        return {
            "key": self.key,
            "value": value,
            "unit": self.unit,
            "source": self.source,
            "source_zh": zh,
            "source_en": en,
            "link": self.link,
            "note": self.note,
            "run_id": self.run_id,
            "measured_on": self.measured_on,
            "stale": self.stale,
            "origin": self.origin,
        }

    @classmethod
    def of(cls, key: str, measured: Measurement, stale: bool) -> Figure:
        """The figure of a measurement, with its run, date and staleness."""
        day = measured.at.date().isoformat() if measured.at else None
        return cls(
            key,
            measured.value,
            measured.unit,
            measured.source,
            measured.link,
            measured.note,
            measured.run_id,
            day,
            stale,
            measured.origin,
        )


def best(offer: OfferFacts, key: str, claimed: Any, typical: Any = None) -> tuple[Any, str]:
    """The best-sourced value for `key` and its source: measured, else claimed, else typical, else unknown."""
    measurements = offer.measurements
    if measurements:
        measured = measurements.get(key)
        if measured is not None:
            return measured.value, measured.source
    if claimed is not None:
        return claimed, CLAIMED
    if typical is not None:
        return typical, ASSUMED
    return None, UNKNOWN


def best_rows(
    table: OfferTable, key: str, claimed: np.ndarray, typical: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """best() for every offer of a table: (value, NaN for none; source code in offer_table.SOURCES)."""
    measured, measured_source = table.measured_figure(key)
    has = measured_source >= 0
    value = np.where(has, measured, claimed)
    source = np.where(has, measured_source, np.where(np.isnan(claimed), UNKNOWN_CODE, CLAIMED_CODE))
    if typical is not None:
        assumed = ~has & np.isnan(claimed) & ~np.isnan(typical)
        value = np.where(assumed, typical, value)
        source = np.where(assumed, SOURCE_CODES[ASSUMED], source)
    return value, source


UNKNOWN_CODE, CLAIMED_CODE = SOURCE_CODES[UNKNOWN], SOURCE_CODES[CLAIMED]


def _typical(storage_type: str, name: str) -> Any:
    return assumptions()["storage"]["typical"].get(storage_type, {}).get(name)


# What each figure of an offer is called, its unit, what the provider claims and the typical value.
FIGURES: dict[str, tuple[str, Callable[[OfferFacts], Any], Callable[[OfferFacts], Any]]] = {
    "rdma_gbps": ("Gbps", lambda o: o.rdma_gbps if o.rdma_type != "none" else None, lambda o: None),
    "intranet_gbps": ("Gbps", lambda o: o.intranet_gbps, lambda o: None),
    "read_iops": ("IOPS", lambda o: o.nominal_iops, lambda o: _typical(o.storage_type, "iops")),
    "write_mb_s": ("MB/s", lambda o: None, lambda o: _typical(o.storage_type, "write_mb_s")),
    "bandwidth_type": (
        "",
        lambda o: None if o.bandwidth_type == "unknown" else o.bandwidth_type,
        lambda o: None,
    ),
    "public_mbps": ("Mbps", lambda o: o.public_mbps, lambda o: None),
    "storage_type": ("", lambda o: None if o.storage_type == "unknown" else o.storage_type, lambda o: None),
    "gpu_model": ("", lambda o: o.gpu_model, lambda o: None),
    "gpu_count": ("GPUs", lambda o: o.gpus_per_node, lambda o: None),
}


ClaimLimit = tuple[str, Callable[[OfferFacts], Any], float, float]  # key, the claim, pass and warn ratios


def gpu_preference_rank(needs: Needs, gpu_model: str) -> int | None:
    """Position of the offer's GPU in the buyer's preference list (0 = first), or None.

    `gpu_model` is a registry spelling ("H100") or what a trial measured ("NVIDIA H100 80GB HBM3", several
    names joined by ", "): every name must be a preferred model, and the least preferred one counts.
    """
    wanted = [model_key(name) for name in needs.gpu_models]
    worst = None
    for name in gpu_model.split(", "):
        key = model_key(name)
        rank = next((index for index, want in enumerate(wanted) if key.startswith(want)), None)
        if rank is None:
            return None
        worst = rank if worst is None else max(worst, rank)
    return worst


def datacenter_city(offer: OfferFacts) -> tuple[cities.City | None, bool]:
    """The datacenter's city from the table, else its province's capital (True: a fallback)."""
    city = cities.lookup(offer.datacenter_city)
    if city is None and offer.datacenter_province:
        return cities.capital_of(offer.datacenter_province), True
    return city, False


def rtt_to(origin: cities.City, city: cities.City) -> float:
    """Estimated round trip between two cities."""
    constants = latency_constants()
    return sizing.rtt_ms(
        cities.distance_km(origin, city),
        route_factor=constants["route_factor"],
        km_per_ms=constants["km_per_ms"],
        equipment_ms=constants["equipment_ms"],
    )


INTRANET_COLUMNS = ("rdma_type", "rdma_gbps", "intranet_gbps")  # what effective_intranet reads


INTRANET_MEASURES = ("rdma_gbps", "intranet_gbps")


STORAGE_MEASURES = ("storage_type", "read_iops", "write_mb_s")  # what storage_kind and storage_figures read


def storage_kind(offer: OfferFacts) -> str:
    """The storage type: measured (lsblk / findmnt) when a run found it, else what the offer says."""
    measured = offer.measurements.get("storage_type") if offer.measurements else None
    return str(measured.value) if measured is not None else offer.storage_type


def storage_figures(
    offer: OfferFacts, typical_storage: dict[str, dict[str, float]]
) -> tuple[tuple[Any, str], tuple[Any, str]]:
    """(value, source) of random-read IOPS and of write MB/s."""
    typical = typical_storage.get(storage_kind(offer))
    iops = best(offer, "read_iops", offer.nominal_iops, typical["iops"] if typical else None)
    write = best(offer, "write_mb_s", None, typical["write_mb_s"] if typical else None)
    return iops, write


# Measured figures compared with the claim: (key, the claim, the Thresholds fields <kind>_pass, <kind>_warn).
BELOW_CLAIM: tuple[tuple[str, Callable[[OfferFacts], Any], str], ...] = (
    ("intranet_gbps", lambda o: o.intranet_gbps, "bandwidth"),
    ("rdma_gbps", lambda o: o.rdma_gbps if o.rdma_type != "none" else None, "bandwidth"),  # perftest
    ("public_mbps", lambda o: o.public_mbps, "bandwidth"),
    ("read_iops", lambda o: o.nominal_iops, "iops"),
)


INTRANET_CLAIM = 0  # BELOW_CLAIM's index of the intranet figure


# The measured figures each criterion rests on (a stale one weighs less in that criterion).
CRITERION_FIGURES: dict[str, frozenset[str]] = {
    "intranet": frozenset({"intranet_gbps", "rdma_gbps"}),
    "storage": frozenset({"read_iops", "write_mb_s", "storage_type"}),
    "bandwidth": frozenset({"public_mbps", "bandwidth_type"}),
}


# The checklist item that settles each figure an offer must be measured on before signing.
VERIFY_ITEMS = {
    "read_iops": "fio_randread",
    "write_mb_s": "fio_checkpoint_write",
    "rtt_ms": "ping_users",
    "intranet_gbps": "intranet_iperf3",
    "rdma_gbps": "rdma_nccl",
}


# The offer columns each claim compared with a measured figure reads.
CLAIM_COLUMNS = {
    "intranet_gbps": ("intranet_gbps",),
    "rdma_gbps": ("rdma_type", "rdma_gbps"),
    "public_mbps": ("public_mbps",),
    "read_iops": ("nominal_iops",),
}


# What intranet_contradiction reads.
CONTRADICTION_COLUMNS = ("rdma_type", "rdma_gbps", "intranet_gbps", "m:rdma_gbps", "m:intranet_gbps")


def claim_limits(evidence: dict[str, Any]) -> tuple[ClaimLimit, ...]:
    """Per figure compared with the claim: (key, the claim, pass ratio, warn ratio), read once per run."""
    thresholds = evidence["thresholds"]
    return tuple(
        (key, claim_of, getattr(thresholds, f"{kind}_pass"), getattr(thresholds, f"{kind}_warn"))
        for key, claim_of, kind in BELOW_CLAIM
    )


def bandwidth_kind(offer: OfferFacts) -> str:
    claimed = None if offer.bandwidth_type == "unknown" else offer.bandwidth_type
    return best(offer, "bandwidth_type", claimed)[0] or "unknown"

"""The table of Chinese cities with coordinates, and great-circle distances between them."""

from __future__ import annotations

import functools
import math
import unicodedata
from dataclasses import dataclass

from app.advice.knowledge import load
from app.core import provinces

EARTH_RADIUS_KM = 6371.0
# Suffixes people add to a city name; "贵安新区" is an alias in the table, not a suffix rule.
_SUFFIXES = ("市", "地区", "盟")


@dataclass(frozen=True)
class City:
    """One city: canonical name, province short name and centre coordinates in degrees."""

    name: str
    province: str
    lat: float
    lon: float
    capital: bool = False
    idc: bool = False


def _key(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).split())


@functools.cache
def _tables() -> tuple[dict[str, City], dict[str, City]]:
    """Cities by accepted name, and each province's capital by province name."""
    by_name: dict[str, City] = {}
    capitals: dict[str, City] = {}
    for row in load("cities")["cities"]:
        province = provinces.lookup(row["province"])
        if province is None:
            raise ValueError(f"cities.yaml: unknown province {row['province']!r} for {row['name']}")
        city = City(
            row["name"],
            province.name,
            float(row["lat"]),
            float(row["lon"]),
            bool(row.get("capital")),
            bool(row.get("idc")),
        )
        for name in (city.name, *row.get("aliases", ())):
            if _key(name) in by_name:
                raise ValueError(f"cities.yaml: {name} is listed twice")
            by_name[_key(name)] = city
        if city.capital:
            capitals[city.province] = city
    return by_name, capitals


def all_cities() -> list[City]:
    """Every city in the table once, in file order."""
    seen: dict[str, City] = {}
    for city in _tables()[0].values():
        seen.setdefault(city.name, city)
    return list(seen.values())


def lookup(text: str | None) -> City | None:
    """The city named by `text` ("上海", "上海市", "贵安新区"), or None."""
    if not text:
        return None
    key = _key(text)
    by_name = _tables()[0]
    if key in by_name:
        return by_name[key]
    for suffix in _SUFFIXES:
        if key.endswith(suffix) and key.removesuffix(suffix) in by_name:
            return by_name[key.removesuffix(suffix)]
    return None


def capital_of(province: str | None) -> City | None:
    """The capital of a province given by name, abbreviation or code."""
    found = provinces.lookup(province) if province else None
    return _tables()[1].get(found.name) if found else None


def examples() -> str:
    """A few accepted names (capitals and datacenter hubs), for error messages."""
    capitals = [city.name for city in all_cities() if city.capital][:4]
    hubs = [city.name for city in all_cities() if city.idc][:4]
    return "、".join(capitals + hubs)


def distance_km(a: City, b: City) -> float:
    """Great-circle (haversine) distance between two city centres in kilometres."""
    phi1, phi2 = math.radians(a.lat), math.radians(b.lat)
    dphi = phi2 - phi1
    dlambda = math.radians(b.lon - a.lon)
    h = math.sin(dphi / 2) ** 2 + math.cos(phi1) * math.cos(phi2) * math.sin(dlambda / 2) ** 2
    return 2 * EARTH_RADIUS_KM * math.asin(min(1.0, math.sqrt(h)))

"""Optimistic locking enforced by the database: every UPDATE/DELETE names the version it read."""

from typing import Any

from sqlalchemy.orm import declared_attr


class Versioned:
    """Mix-in for tables with an integer `version` column that the services bump on every change.

    SQLAlchemy then issues ``UPDATE ... WHERE id = :id AND version = :read`` (and the same for
    DELETE); when another writer got there first no row matches and the flush raises StaleDataError,
    which the services turn into a 409. A check done in Python after a SELECT is not a lock.
    """

    @declared_attr.directive
    def __mapper_args__(cls) -> dict[str, Any]:
        """Map `version` as the version counter; the services set its new value themselves."""
        return {"version_id_col": cls.__table__.c.version, "version_id_generator": False}


class AutoVersioned:
    """Mix-in for tables whose `version` SQLAlchemy itself bumps on every UPDATE (and checks, as above)."""

    @declared_attr.directive
    def __mapper_args__(cls) -> dict[str, Any]:
        """Map `version` as a counter that every flush of a change increments."""
        return {"version_id_col": cls.__table__.c.version}

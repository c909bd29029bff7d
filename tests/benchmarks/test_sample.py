"""The fast sample constructor builds the same frozen Sample as the dataclass's own __init__."""

from __future__ import annotations

import dataclasses

import pytest

from benchmarks.sample import Sample, new_sample


def test_new_sample_equals_the_dataclass_and_stays_frozen():
    metadata = {"gpu_index": 0}
    fast = new_sample("gpu_util", 98.0, "%", metadata, 12.5)
    assert fast == Sample("gpu_util", 98.0, "%", metadata, 12.5)
    assert type(fast) is Sample and fast.metadata is metadata
    assert fast.to_dict() == Sample("gpu_util", 98.0, "%", metadata, 12.5).to_dict()
    assert dataclasses.asdict(fast)["timestamp"] == 12.5
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.value = 1.0  # type: ignore[misc]
    assert fast.with_metadata(host="a").metadata == {"host": "a", "gpu_index": 0}

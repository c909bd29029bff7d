"""Suite parameters: durations, sizes and addresses, validated with bounds so that every run is bounded."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

# A shell never sees these unquoted, but a newline or NUL in a path or address is always a mistake.
SafeText = Annotated[str, StringConstraints(min_length=1, max_length=255, pattern=r"^[^\x00\n\r]+$")]


class SuiteParams(BaseModel):
    """Knobs of a benchmark run; defaults follow DOMAIN.md section 5, tests shorten them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    iperf3_seconds: int = Field(10, ge=1, le=600, description="length of each iperf3 test")
    iperf3_parallel: int = Field(4, ge=2, le=64, description="streams of the parallel iperf3 test")
    iperf3_port: int = Field(5201, ge=1024, le=65535, description="port of the iperf3 server")
    fio_seconds: int = Field(30, ge=1, le=600, description="length of the 4k random-read test")
    fio_size_mib: int = Field(1024, ge=8, le=262144, description="size of the random-read test file")
    write_size_mib: int = Field(1024, ge=8, le=262144, description="bytes written by the checkpoint test")
    write_fsync_every: int = Field(32, ge=1, le=4096, description="fsync after this many 1 MiB writes")
    storage_path: SafeText = Field(".", description="directory on the data disk (relative: home)")
    ping_count: int = Field(10, ge=1, le=1000)
    ping_interval_s: float = Field(0.2, ge=0.2, le=10.0)
    gpu_seconds: int = Field(10, ge=1, le=3600, description="length of the GPU workload and sampling")
    gpu_sample_ms: int = Field(500, ge=100, le=60000)
    gpu_workload: list[SafeText] | None = Field(
        None, max_length=64, description="argv of the GPU workload; none: built-in torch matmul; []: idle"
    )
    dataload_files: int = Field(2000, ge=10, le=200000, description="small files the data-loading test reads")
    dataload_file_kib: int = Field(
        112, ge=1, le=65536, description="size of each file (an average JPEG image)"
    )
    dataload_seconds: float = Field(10.0, ge=0.5, le=600.0, description="time limit of each read pass")
    collective_seconds: int = Field(120, ge=5, le=3600, description="time limit of the all-reduce benchmark")
    collective_max_bytes: int = Field(
        8 * 2**30, ge=8, le=64 * 2**30, description="largest all-reduce message (peak needs several GB)"
    )
    stability_repeats: int = Field(12, ge=2, le=1000)
    stability_interval_s: float = Field(300.0, ge=0.0, le=86400.0, description="pause between repeats")
    stability_test_seconds: int = Field(10, ge=1, le=600)
    target_address: SafeText | None = Field(None, description="address to reach the target (default: host)")
    peer_address: SafeText | None = Field(None, description="address the target reaches the peer on")
    command_grace_s: float = Field(60.0, ge=1.0, le=3600.0, description="slack added to each timeout")

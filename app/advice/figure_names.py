"""What people call the figures a case ranks offers on (ranking.figures.FIGURES and measured extras)."""

FIGURE_NAMES: dict[str, tuple[str, str]] = {
    "rdma_gbps": ("RDMA 带宽", "RDMA bandwidth"),
    "intranet_gbps": ("内网带宽", "intranet bandwidth"),
    "public_mbps": ("公网带宽", "public bandwidth"),
    "read_iops": ("读 IOPS", "read IOPS"),
    "write_mb_s": ("写入速度", "write speed"),
    "bandwidth_type": ("带宽类型", "bandwidth type"),
    "storage_type": ("存储类型", "storage type"),
    "gpu_model": ("GPU 型号", "GPU model"),
    "gpu_count": ("GPU 数量", "GPU count"),
    "rtt_ms": ("往返时延", "round-trip time"),
    "intranet_rtt_ms": ("内网往返时延", "intranet round-trip time"),
    "office_rtt_ms": ("到办公室往返时延", "round-trip time to the office"),
}


def figure_name(key: str) -> tuple[str, str]:
    """(zh, en) name of a figure; the key itself for one without a name."""
    return FIGURE_NAMES.get(key, (key, key))

"""Install the stand-in nvidia-smi (recorded output, no GPU needed) into a folder for a test sshd's PATH."""

from __future__ import annotations

from pathlib import Path

STANDIN = Path(__file__).with_name("nvidia_smi_standin.sh")
RECORDED = Path(__file__).resolve().parent.parent / "data" / "bench" / "nvidia-smi"


def install_standin(
    bin_dir: Path,
    *,
    inventory: str = "inventory_8xh800.csv",
    sampling: str = "sampling_8xh800.csv",
    health: str = "health_8xh800.csv",
) -> Path:
    """Write an executable `nvidia-smi` into `bin_dir` that prints the named recordings."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = STANDIN.read_text()
    for marker, value in (
        ("@DATA@", str(RECORDED)),
        ("@INVENTORY@", inventory),
        ("@SAMPLING@", sampling),
        ("@HEALTH@", health),
    ):
        script = script.replace(marker, value)
    target = bin_dir / "nvidia-smi"
    target.write_text(script)
    target.chmod(0o755)
    return target

"""Storage type evidence: `lsblk -J -d` (disks) and `findmnt -J -T PATH` (the filesystem holding the data).

Classes: local_nvme, local_ssd, local_hdd, virtual_disk (virtio/Xen/emulated), network_block (iSCSI,
FC, NBD, RBD), network_fs (NFS, Ceph, Lustre, FUSE ...), memory (tmpfs), unknown.
"""

from __future__ import annotations

import functools
import re
import textwrap
from collections.abc import Sequence
from typing import Any

from jc.parsers import lsblk as jc_lsblk

from benchmarks.messages import message as _
from benchmarks.probes import UploadTool, register_parser, register_probe, register_upload
from benchmarks.probes._json import dig, load_json_object
from benchmarks.probes.base import TARGET, Probe, ProbeContext, ProbeFailed
from benchmarks.sample import ParseError, Sample

LSBLK_COLUMNS = "NAME,ROTA,TRAN,MODEL,SIZE,TYPE"
FINDMNT_COLUMNS = "SOURCE,TARGET,FSTYPE,OPTIONS"
LSBLK_MARK = "### lsblk"
SEPARATOR = "### findmnt"
# lsblk's version line, then both JSON documents, in one round trip; $1 is the data path.
SCRIPT = (
    f"lsblk --version 2>&1 | head -n 1; echo '{LSBLK_MARK}'; lsblk -J -d -o {LSBLK_COLUMNS}; s=$?; "
    f"echo '{SEPARATOR}'; findmnt -J -T \"$1\" -o {FINDMNT_COLUMNS}; t=$?; [ $s -eq 0 ] && [ $t -eq 0 ]"
)
NETWORK_FS = re.compile(
    r"^(nfs4?|cifs|smb3?|ceph|cephfs|glusterfs|lustre|beegfs|gpfs|9p|virtiofs|afs|ocfs2|gfs2|fuse\..*|juicefs)$"
)
MEMORY_FS = {"tmpfs", "ramfs"}
VIRTUAL_MODELS = re.compile(
    r"qemu|virtual|vmware|virtio|xen|elastic block store|google persistent|persistentdisk", re.I
)
NETWORK_BLOCK_TRANSPORTS = {"iscsi", "fc", "nvme-of", "rdma"}
NETWORK_BLOCK_NAMES = re.compile(r"^(nbd|rbd|drbd)\d+")
VIRTUAL_NAMES = re.compile(r"^(vd[a-z]+|xvd[a-z]+)$")
TREE_CHILD = re.compile(r"^[\s|`├└│]")  # table lines under a disk: its partitions, holders, extra mounts
# Model strings of common drive families, for lsblk output without ROTA (sysfs models may use _ for spaces).
SSD_MODELS = re.compile(
    r"ssd|^samsung[ _]mz|^mz-?7|mtfd|^micron_\d|^kingston[ _]s|^ct\d+mx|^sandisk[ _]sd|^intel[ _]ssd", re.I
)
HDD_MODELS = re.compile(
    r"hdd|^(seagate[ _])?st\d+(nm|dm|vn|vx|ne|nx|lm|mm|as|ns)|^wdc[ _]wd\d|^wd\d{3,}[a-z]"
    r"|^(hgst[ _])?hu[hsa]\d|^(toshiba[ _])?(mg|md|al|dt|hdw)\d",
    re.I,
)


def _rotational(disk: dict[str, Any]) -> bool | None:
    """lsblk's ROTA as a bool (true/false, or "1"/"0" before util-linux 2.33); None when not printed."""
    value = disk.get("rota")
    if value in (True, "1", 1):
        return True
    if value in (False, "0", 0):
        return False
    return None


def _kind_of_drive(disk: dict[str, Any], name: str, model: str) -> tuple[str, str | None]:
    """SSD or hard disk of a local sd*/hd* drive: ROTA when printed, else the model string."""
    rotational = _rotational(disk)
    if rotational is not None and name.startswith(("sd", "hd")):
        return ("local_hdd" if rotational else "local_ssd"), "rota"
    if SSD_MODELS.search(model):
        return "local_ssd", "model"
    if HDD_MODELS.search(model):
        return "local_hdd", "model"
    return "unknown", None


def disk_class(disk: dict[str, Any]) -> tuple[str, str | None]:
    """(storage class, the lsblk column that decided it: name, tran, model or rota; None when unknown)."""
    name = str(disk.get("name") or "")
    transport = str(disk.get("tran") or "").lower()
    model = str(disk.get("model") or "").strip()
    if NETWORK_BLOCK_NAMES.match(name):
        return "network_block", "name"
    if transport in NETWORK_BLOCK_TRANSPORTS:
        return "network_block", "tran"
    if VIRTUAL_NAMES.match(name):
        return "virtual_disk", "name"
    if VIRTUAL_MODELS.search(model):
        return "virtual_disk", "model"
    if transport == "virtio":
        return "virtual_disk", "tran"
    if name.startswith(("zram", "ram")):
        return "memory", "name"
    if name.startswith("nvme"):
        return "local_nvme", "name"
    if transport == "nvme":
        return "local_nvme", "tran"
    return _kind_of_drive(disk, name, model)


def classify_disk(disk: dict[str, Any]) -> str:
    """Storage class of one lsblk disk entry."""
    return disk_class(disk)[0]


def _disks(data: dict[str, Any], tool: str) -> list[dict[str, Any]]:
    devices = dig(data, "blockdevices", tool=tool, expected=list)
    for index, device in enumerate(devices):
        if not isinstance(device, dict) or not device.get("name"):
            raise ParseError(tool, _("blockdevices.%(index)s 没有名称", index=index))
    return devices


def _table_disks(text: str) -> list[dict[str, Any]]:
    """Disk rows of lsblk's plain table (`lsblk -d -o NAME,ROTA,...`), read with jc; partitions left out."""
    lines = [line for line in textwrap.dedent(text).splitlines() if line.strip()]
    header = next((index for index, line in enumerate(lines) if line.split()[0] == "NAME"), None)
    if header is None:
        raise ParseError("lsblk", _("既不是 lsblk -J 的 JSON，也没有以 NAME 开头的 lsblk 表头"))
    rows = [lines[header]] + [line for line in lines[header + 1 :] if not TREE_CHILD.match(line)]
    try:
        devices = jc_lsblk.parse("\n".join(rows), quiet=True)
    except Exception as exc:  # jc's table reader raises whatever a malformed table trips over
        raise ParseError("lsblk", _("lsblk 表格无法读取：%(problem)s", problem=exc)) from exc
    if not devices:
        raise ParseError("lsblk", _("lsblk 表格中没有设备行"))
    return devices


def _lsblk_devices(text: str) -> list[dict[str, Any]]:
    """The disks of lsblk's JSON (-J) or, without JSON, of its plain table."""
    if text.lstrip().startswith("{") or '"blockdevices"' in text:
        return _disks(load_json_object(text, "lsblk"), "lsblk")
    return _table_disks(text)


@register_parser("lsblk", accepts=_("lsblk -d 的 JSON（-J）或表格输出，带不带 ROTA 列均可"))
def parse_lsblk(text: str) -> list[Sample]:
    """One `block_device` sample per disk: value is its class, metadata the lsblk columns and `decided_by`."""
    samples = []
    for device in _lsblk_devices(text):
        kind, column = disk_class(device)
        samples.append(Sample("block_device", kind, "", {**device, "decided_by": column}))
    return samples


@register_parser("findmnt")
def parse_findmnt(text: str) -> list[Sample]:
    """One `filesystem` sample: value is the fstype, metadata source, target and options."""
    filesystems = dig(load_json_object(text, "findmnt"), "filesystems", tool="findmnt", expected=list)
    if not filesystems or not isinstance(filesystems[0], dict) or "fstype" not in filesystems[0]:
        raise ParseError("findmnt", _("没有带 fstype 的文件系统"))
    found = filesystems[0]
    return [Sample("filesystem", str(found["fstype"]), "", {key: found.get(key) for key in found})]


def _backing_disk(source: str, devices: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The lsblk disk a mount source lives on: /dev/nvme0n1p2 -> nvme0n1 (longest name prefix)."""
    name = source.removeprefix("/dev/").split("[")[0]
    matches = [device for device in devices if name.startswith(str(device["name"]))]
    return max(matches, key=lambda device: len(str(device["name"])), default=None)


def classify(filesystem: dict[str, Any], devices: list[dict[str, Any]]) -> tuple[str, str]:
    """(storage class, how it was decided) for the filesystem holding the data path."""
    fstype = str(filesystem.get("fstype") or "")
    source = str(filesystem.get("source") or "")
    if NETWORK_FS.match(fstype):
        return "network_fs", f"filesystem type {fstype} is a network filesystem"
    if fstype in MEMORY_FS:
        return "memory", f"filesystem type {fstype} lives in memory"
    disk = _backing_disk(source, devices) if source.startswith("/dev/") else None
    if disk is not None:
        kind, column = disk_class(disk)
        how = f", by its {column.upper()} column" if column else ""
        return kind, f"{source} is on disk {disk['name']} ({kind}{how})"
    kinds = {classify_disk(device) for device in devices} - {"memory"}
    if len(kinds) == 1:
        kind = kinds.pop()
        return kind, f"{source or fstype} maps to no single disk; every disk here is {kind}"
    return "unknown", f"{source or fstype} maps to no disk, and the disks differ ({', '.join(sorted(kinds))})"


@register_parser("disk")
def parse_output(text: str) -> list[Sample]:
    """The probe's combined lsblk + findmnt output -> disks, filesystem and the detected storage class."""
    if SEPARATOR not in text:
        raise ParseError(
            "disk",
            _("没有 '%(separator)s' 分隔行：应先是 lsblk JSON，再是 findmnt JSON", separator=SEPARATOR),
        )
    lsblk_text, findmnt_text = text.split(SEPARATOR, 1)
    version, _mark, lsblk_text = lsblk_text.rpartition(LSBLK_MARK)
    disks = parse_lsblk(lsblk_text)
    filesystem = parse_findmnt(findmnt_text)[0]
    devices = [sample.metadata for sample in disks]
    kind, reason = classify(filesystem.metadata, devices)
    detected = Sample(
        "storage_class",
        kind,
        "",
        {"reason": reason, "fstype": filesystem.value, "source": filesystem.metadata.get("source")},
    )
    samples = [detected, filesystem, *disks]
    if version.strip():
        samples = [sample.with_metadata(tool_version=version.strip().splitlines()[0]) for sample in samples]
    return samples


@register_probe
class DiskProbe(Probe):
    """Which kind of storage holds `storage_path`."""

    name = "disk"
    tool = "lsblk"

    def tools(self, ctx: ProbeContext) -> dict[str, tuple[str, ...]]:
        """lsblk and findmnt (util-linux) on the target."""
        return {TARGET: ("lsblk", "findmnt")}

    def run(self, ctx: ProbeContext) -> None:
        """Both commands in one round trip, separated by a marker line."""
        path = ctx.params.storage_path
        result = ctx.execute(
            TARGET,
            "lsblk + findmnt",
            ["sh", "-c", SCRIPT, "sh", path],
            timeout=30,
            parser="disk",
            metadata={"storage_path": path},
        )
        if result.timed_out:
            raise ProbeFailed(_("lsblk/findmnt 超时"))


def uploaded_class(tool: str, samples: Sequence[Sample]) -> list[Sample]:
    """The storage class from an uploaded lsblk or findmnt output alone, where that half decides it."""
    if tool == "findmnt":
        kind, reason = classify(samples[0].metadata, [])
    else:
        kind, reason = classify({}, [sample.metadata for sample in samples])
    if kind == "unknown":
        return []  # the other half (lsblk or findmnt) is needed: no verdict from half the evidence
    fstype = samples[0].value if tool == "findmnt" else None
    source = samples[0].metadata.get("source") if tool == "findmnt" else None
    return [Sample("storage_class", kind, "", {"reason": reason, "fstype": fstype, "source": source})]


# Outputs of this tool captured by hand and uploaded (the upload form, the API, `flask bench upload`).
register_upload(
    UploadTool(
        "lsblk",
        "lsblk",
        "disk_type",
        ("storage",),
        "lsblk -J -d -o NAME,ROTA,TRAN,MODEL,SIZE,TYPE",
        order=40,
        derive=functools.partial(uploaded_class, "lsblk"),
    )
)
register_upload(
    UploadTool(
        "findmnt",
        "findmnt",
        "disk_type",
        ("storage",),
        "findmnt -J -T /DATA -o SOURCE,TARGET,FSTYPE,OPTIONS",
        order=50,
        derive=functools.partial(uploaded_class, "findmnt"),
    )
)

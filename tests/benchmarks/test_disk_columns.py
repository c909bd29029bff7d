"""lsblk without a ROTA column: the disk class comes from TRAN, MODEL or the name, and says which one decided.

Expected classes were read off the recorded outputs: the H200 machine's virtio disks, and lsblk 2.38.1 run
with --sysroot over util-linux's sysfs dumps of two real machines (a Kingston SATA SSD, a WD Caviar hard disk,
Kingston NVMe drives; TRAN is empty for the SATA disks there).
"""

from __future__ import annotations

import pytest

from benchmarks.probes import parse
from benchmarks.probes.disk import classify_disk, disk_class
from benchmarks.sample import ParseError
from tests.benchmarks.conftest import DATA
from tests.benchmarks.test_parsers import combined, one


def disks(name: str) -> dict[str, tuple[str, str | None]]:
    """{disk name: (class, deciding column)} of a recorded lsblk JSON."""
    samples = parse("lsblk", (DATA / name).read_text())
    return {s.metadata["name"]: (s.value, s.metadata["decided_by"]) for s in samples}


def test_h200_virtio_disks_without_rota():
    assert disks("real_h200/lsblk_json_no_rota.json") == {
        "zram0": ("memory", "name"),
        "vda": ("virtual_disk", "name"),
        "vdb": ("virtual_disk", "name"),
    }


def test_h200_all_columns_rota_true_on_virtio_still_decided_by_name():
    # real_h200/lsblk_full_json.json (`lsblk -J -d -O`): vda and vdb report "rota": true
    assert disks("real_h200/lsblk_full_json.json") == {
        "zram0": ("memory", "name"),
        "vda": ("virtual_disk", "name"),
        "vdb": ("virtual_disk", "name"),
    }


def test_sata_disks_without_rota_or_tran_are_told_apart_by_model():
    assert disks("lsblk_sysroot_simple_nvme_no_rota.json") == {
        "sda": ("local_ssd", "model"),  # KINGSTON SH103S3
        "sdb": ("local_hdd", "model"),  # WDC WD800JD-00MS
        "nvme0n1": ("local_nvme", "name"),
    }


def test_rota_decides_where_lsblk_prints_it():
    assert disks("lsblk_sysroot_simple_nvme.json") == {
        "sda": ("local_ssd", "rota"),
        "sdb": ("local_hdd", "rota"),
        "nvme0n1": ("local_nvme", "name"),
    }


def test_a_disk_no_column_explains_stays_unknown():
    found = disks("lsblk_sysroot_bcachefs_no_rota.json")
    assert found["sda"] == ("local_ssd", "model")  # KINGSTON_SH103S3240G (underscores in older sysfs)
    assert found["sdb"] == ("local_hdd", "model")  # WDC_WD800JD-00MSA1
    assert found["sdc"] == ("unknown", None)  # scsi_debug: a kernel test device
    assert found["sr0"] == ("unknown", None)  # an optical drive
    assert found["nvme0n1"] == ("local_nvme", "name")


@pytest.mark.parametrize(
    ("disk", "expected"),
    [
        ({"name": "sda", "tran": "sas", "model": "ST4000NM0035-1V4107"}, ("local_hdd", "model")),
        ({"name": "sdb", "tran": "sata", "model": "ST3000DM001-1CH166"}, ("local_hdd", "model")),
        ({"name": "sdc", "tran": "sas", "model": "HUS724030ALA640"}, ("local_hdd", "model")),
        ({"name": "sdd", "tran": "sata", "model": "HGST HUS726040ALE610"}, ("local_hdd", "model")),
        ({"name": "sde", "tran": "sata", "model": "TOSHIBA MG04ACA400E"}, ("local_hdd", "model")),
        ({"name": "sdf", "tran": "sata", "model": "WDC WD20EFRX-68EUZN0"}, ("local_hdd", "model")),
        ({"name": "sda", "tran": "sata", "model": "SAMSUNG MZ7LH480HAHQ-00005"}, ("local_ssd", "model")),
        ({"name": "sda", "tran": "sata", "model": "Samsung SSD 870 EVO 1TB"}, ("local_ssd", "model")),
        ({"name": "sda", "tran": "sata", "model": "INTEL SSDSC2KB480G8"}, ("local_ssd", "model")),
        ({"name": "sda", "tran": "sata", "model": "Micron_5300_MTFDDAK960TDS"}, ("local_ssd", "model")),
        # NVMe behind an unusual name (a multipath or renamed node): TRAN says so
        ({"name": "dm-0", "tran": "nvme", "model": "INTEL SSDPE2KX040T8"}, ("local_nvme", "tran")),
        ({"name": "nvme3n1", "tran": None, "model": "SAMSUNG MZQL27T6HBLA-00A07"}, ("local_nvme", "name")),
        # virtual and network disks keep their column
        ({"name": "sda", "tran": "virtio", "model": None}, ("virtual_disk", "tran")),
        ({"name": "sdb", "tran": "iscsi", "model": "LIO-ORG"}, ("network_block", "tran")),
        ({"name": "sda", "tran": None, "model": "QEMU HARDDISK"}, ("virtual_disk", "model")),
        ({"name": "sda", "tran": None, "model": "PersistentDisk"}, ("virtual_disk", "model")),
        (
            {"name": "nvme0n1", "tran": "nvme", "model": "Amazon Elastic Block Store"},
            ("virtual_disk", "model"),
        ),
        # nothing says spinning or flash: no guess
        ({"name": "sdg", "tran": "usb", "model": "Ultra USB 3.0"}, ("unknown", None)),
        ({"name": "sdh", "tran": "sas", "model": "MR9560 VD"}, ("unknown", None)),
        ({"name": "sdi"}, ("unknown", None)),
    ],
)
def test_disk_class_without_rota(disk, expected):
    assert disk_class(disk) == expected
    assert classify_disk(disk) == expected[0]


@pytest.mark.parametrize(
    ("rota", "expected"),
    [(True, "local_hdd"), (False, "local_ssd"), ("1", "local_hdd"), ("0", "local_ssd"), (1, "local_hdd")],
)
def test_rota_in_every_form_lsblk_prints_it(rota, expected):
    # util-linux before 2.33 printed JSON values as strings ("0" / "1")
    disk = {"name": "sda", "rota": rota, "tran": "sata", "model": "ST4000NM0035"}
    assert disk_class(disk) == (expected, "rota")


def test_storage_class_reason_names_the_deciding_column():
    text = (DATA / "lsblk_sysroot_simple_nvme_no_rota.json").read_text()
    findmnt = (
        '{"filesystems": [{"source": "/dev/sdb1", "target": "/data", "fstype": "ext4", "options": "rw"}]}\n'
    )
    samples = parse("disk", text + "### findmnt\n" + findmnt)
    assert one(samples, "storage_class") == "local_hdd"
    reason = next(s for s in samples if s.metric == "storage_class").metadata["reason"]
    assert "sdb" in reason and "by its MODEL column" in reason


def test_recorded_probe_output_still_virtual():
    samples = parse("disk", combined("lsblk_virtio.json", "findmnt_ext4.json"))
    assert one(samples, "storage_class") == "virtual_disk"


# ---------------------------------------------------------------- lsblk's plain table (no -J)
def test_h200_table_without_rota():
    # real_h200/lsblk_no_rota.txt: `lsblk -d -o NAME,TRAN,MODEL,SIZE,TYPE`, empty TRAN and MODEL cells
    assert disks("real_h200/lsblk_no_rota.txt") == {
        "zram0": ("memory", "name"),
        "vda": ("virtual_disk", "name"),
        "vdb": ("virtual_disk", "name"),
    }


def test_table_with_rota_and_models_holding_spaces():
    # `lsblk -d -o NAME,ROTA,TRAN,MODEL,SIZE,TYPE` over the simple-nvme dump: ROTA 0 / 1 / 0
    samples = parse("lsblk", (DATA / "lsblk_sysroot_simple_nvme.txt").read_text())
    by_name = {s.metadata["name"]: s for s in samples}
    assert {name: (s.value, s.metadata["decided_by"]) for name, s in by_name.items()} == {
        "sda": ("local_ssd", "rota"),
        "sdb": ("local_hdd", "rota"),
        "nvme0n1": ("local_nvme", "name"),
    }
    assert by_name["sdb"].metadata["model"] == "WDC WD800JD-00MS"
    assert by_name["sda"].metadata["size"] == "223.6G"


def test_default_table_keeps_disks_and_leaves_partitions_out():
    # real_h200/lsblk_default.txt: plain `lsblk` (MAJ:MIN, RM, RO, MOUNTPOINTS columns, no ROTA)
    assert set(disks("real_h200/lsblk_default.txt")) == {"zram0", "vda", "vdb"}
    tree = (
        "NAME   MAJ:MIN RM  SIZE RO TYPE MOUNTPOINTS\n"
        "sda      8:0    0  1.8T  0 disk\n"
        "└─sda1   8:1    0  1.8T  0 part /data\n"
    )
    assert set(disks_of(tree)) == {"sda"}


def test_table_pasted_with_an_indent():
    table = (DATA / "lsblk_sysroot_simple_nvme.txt").read_text()
    text = "".join(f"    {line}\n" for line in table.splitlines())
    assert disks_of(text) == {"sda": "local_ssd", "sdb": "local_hdd", "nvme0n1": "local_nvme"}


@pytest.mark.parametrize("text", ["lsblk: command not found\n", "", "KEY VALUE\nx y\n", "NAME\n"])
def test_unreadable_tables_are_named(text):
    with pytest.raises(ParseError) as caught:
        parse("lsblk", text)
    assert caught.value.tool == "lsblk"


def disks_of(text: str) -> dict[str, str]:
    """{disk name: class} of lsblk text."""
    return {s.metadata["name"]: s.value for s in parse("lsblk", text)}

"""Hand-captured outputs that no tool prints (issue 23 items 8 and 9): NaN, Infinity, numbers too long for
Python, JSON nested past the parser's depth and values no machine can show are refused with a 422 naming
the problem, the same on the API, the upload tab and the CLI, and nothing is stored."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlmodel import Session, select

from app.core.errors import InvalidInput
from app.models import Offer
from app.models.trials import BenchRun, BenchStep
from app.trials import bench_uploads
from tests.api.conftest import assert_error_shape
from tests.benchmarks.conftest import DATA

FIO = (DATA / "fio_randread.json").read_text()
IPERF3 = (DATA / "iperf3_single.json").read_text()
READ_IOPS = '"iops" : 133464.071856'
RECEIVED = '"bytes":\t17275289600,\n\t\t\t"bits_per_second":\t46063047589.463135'  # end.sum_received
INVENTORY = (DATA / "nvidia-smi" / "inventory_8xh800.csv").read_text()
PING = (DATA / "ping_ok.txt").read_text()
DEEP = 100_000  # far past the recursion limit of Python's JSON parser


def _with(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


# tool, --path, output, words the refusal must hold
UNREADABLE = [
    ("fio", None, _with(FIO, READ_IOPS, '"iops" : NaN'), ["无法解析 fio 输出", "NaN", "有限的数字"]),
    ("fio", None, _with(FIO, READ_IOPS, '"iops" : -Infinity'), ["-Infinity", "有限的数字"]),
    ("fio", None, _with(FIO, READ_IOPS, '"iops" : 1e400'), ["1e400", "超出范围"]),
    (
        "iperf3",
        "public",
        _with(IPERF3, RECEIVED, '"bytes": 1, "bits_per_second": 1' + "0" * 400),
        ["401 位", "最多 308 位"],
    ),
    ("iperf3", "public", '{"a": ' + "[" * DEEP + "]" * DEEP + "}", ["无法解析 iperf3 输出", "嵌套过深"]),
    ("lsblk", None, '{"blockdevices": ' + "[" * DEEP + "]" * DEEP + "}", ["无法解析 lsblk 输出", "嵌套过深"]),
    (
        "ping",
        "public",
        _with(PING, "5 packets transmitted", "9" * 5000 + " packets transmitted"),
        ["无法解析 ping 输出"],
    ),
]
IMPLAUSIBLE = [
    ("fio", None, _with(FIO, READ_IOPS, '"iops" : -1'), "read_iops 的值 -1 IOPS", "0–50,000,000 IOPS"),
    ("fio", None, _with(FIO, READ_IOPS, '"iops" : 1e308'), "read_iops 的值 1e+308 IOPS", "0–50,000,000 IOPS"),
    (
        "iperf3",
        "public",
        _with(IPERF3, RECEIVED, '"bytes": 1, "bits_per_second": 9e15'),
        "throughput 的值 9,000,000,000 Mbit/s",
        "0–3,200,000 Mbit/s",
    ),
    (
        "nvidia-smi",
        None,
        _with(INVENTORY, "81559 MiB", "nan MiB"),
        "gpu_memory_total 的值 nan MiB",
        "0–1,048,576 MiB",
    ),
]
HOSTILE = [(tool, path, output) for tool, path, output, *_ in UNREADABLE + IMPLAUSIBLE]


def _stored(session: Session) -> tuple[int, int]:
    session.expire_all()
    return len(session.exec(select(BenchRun)).all()), len(session.exec(select(BenchStep)).all())


def _refusal(session: Session, offer: Offer, tool: str, path: str | None, output: str) -> str:
    """The service's one message on field "output" for this upload."""
    with pytest.raises(InvalidInput) as caught:
        bench_uploads.upload_output(session, offer_id=offer.id, tool=tool, output=output, path=path)
    (error,) = caught.value.errors
    assert error.field == "output"
    return error.message


@pytest.mark.parametrize(("tool", "path", "output", "words"), UNREADABLE)
def test_numbers_and_nesting_no_parser_reads_are_named(session, offer, tool, path, output, words):
    message = _refusal(session, offer, tool, path, output)
    assert all(word in message for word in words), message
    assert message.endswith("未保存任何内容") and len(message) < 600
    assert _stored(session) == (0, 0)


@pytest.mark.parametrize(("tool", "path", "output", "value", "accepted"), IMPLAUSIBLE)
def test_impossible_values_are_refused_naming_metric_value_and_range(
    session, offer, tool, path, output, value, accepted
):
    message = _refusal(session, offer, tool, path, output)
    assert value in message and f"可接受范围 {accepted}" in message, message
    assert _stored(session) == (0, 0)


def test_every_implausible_metric_is_named_once(session, offer):
    both = _with(_with(FIO, READ_IOPS, '"iops" : -1'), '"bw_bytes" : 546668838', '"bw_bytes" : -5')
    with pytest.raises(InvalidInput) as caught:
        bench_uploads.upload_output(session, offer_id=offer.id, tool="fio", output=both)
    named = [error.message.split(" 的值")[0].rsplit(" ", 1)[-1] for error in caught.value.errors]
    assert named == ["read_iops", "read_bandwidth"]


@pytest.mark.parametrize(("tool", "path", "output"), HOSTILE)
def test_the_api_answers_422_with_the_services_message(app, session, token_for, offer, tool, path, output):
    expected = _refusal(session, offer, tool, path, output)
    response = app.test_client().post(
        f"/api/v1/offers/{offer.id}/uploads",
        json={"tool": tool, "path": path, "output": output},
        headers=token_for("analyst"),
    )
    (error,) = assert_error_shape(response, 422)
    assert error == {"field": "output", "message": expected}


def test_the_upload_tab_shows_the_same_message_under_the_output(login, session, provider, offer):
    client = login("analyst")
    for tool, path, output in (HOSTILE[0], HOSTILE[4], IMPLAUSIBLE[0][:3]):
        expected = _refusal(session, offer, tool, path, output)
        form = {"offer_id": str(offer.id), "tool": tool, "path": path or "", "output": output}
        response = client.post(f"/providers/{provider.id}/trials/uploads", data=form)
        assert response.status_code == 422
        html = response.get_data(as_text=True)
        assert 'data-error="output"' in html and expected.split("：")[0] in html
    assert _stored(session) == (0, 0)


def test_the_cli_exits_1_with_the_message_and_no_traceback(app, session, offer, tmp_path: Path):
    runner = app.test_cli_runner()
    for index, (tool, path, output) in enumerate((HOSTILE[1], HOSTILE[5], IMPLAUSIBLE[1][:3])):
        expected = _refusal(session, offer, tool, path, output)
        saved = tmp_path / f"output-{index}.txt"
        saved.write_text(output)
        args = ["bench", "upload", str(offer.id), "--tool", tool, str(saved)]
        result = runner.invoke(args=[*args, *(["--path", path] if path else [])])
        assert result.exit_code == 1, result.output
        assert f"error: output: {expected}" in result.output and "Traceback" not in result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)
    assert _stored(session) == (0, 0)


def test_cli_parse_names_a_number_no_parser_reads(app, tmp_path: Path):
    saved = tmp_path / "ping.txt"
    saved.write_text(_with(PING, "5 packets transmitted", "9" * 5000 + " packets transmitted"))
    result = app.test_cli_runner().invoke(args=["bench", "parse", "ping", str(saved)])
    assert result.exit_code == 1 and "error: ping: " in result.output and "无法读取的数字" in result.output
    assert isinstance(result.exception, SystemExit)

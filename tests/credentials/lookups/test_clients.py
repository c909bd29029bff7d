"""The official-lookup clients: pure parsers on recorded replies, and the real flow against the fake."""

from __future__ import annotations

import base64
import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from scrapers import miit_icp, miit_licence
from scrapers.http import FetchResult, HostRateLimiter, HttpClient, HttpPolicy
from scrapers.official import (
    MalformedResponse,
    Refused,
    TokenExpired,
    WrongAnswer,
    decode_image,
    parse_date,
    payload,
)

MIIT = Path(__file__).resolve().parents[2] / "data" / "miit"
NOW = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)


def sample(name: str) -> dict:
    return json.loads((MIIT / name).read_text(encoding="utf-8"))


def result(body: bytes, status: int = 200) -> FetchResult:
    return FetchResult(
        url="u", final_url="u", method="POST", status=status, headers={}, content_type="application/json",
        body=body, truncated=False, sha256="", fetched_at=NOW, elapsed=0.0,
    )  # fmt: skip


# ------------------------------------------------------------------------------------------------ ICP parsers
def test_auth_key_is_md5_of_salt_and_timestamp():
    assert miit_icp.auth_key(1700000000000) == "746a22b136097604e213ca3269244fad"


def test_parse_auth_reads_the_misspelt_token_field_and_lifetime():
    token = miit_icp.parse_auth(sample("icp_auth.json"), NOW)
    assert token.value.startswith("eyJ0eXBl") and token.expires_at == NOW + timedelta(seconds=300)
    assert token.valid(NOW) and not token.valid(NOW + timedelta(seconds=290))


def test_parse_captcha_gives_png_images_and_uuid():
    captcha = miit_icp.parse_captcha(sample("icp_captcha.json"))
    assert captcha.uuid == "0b8f3c1e6d2a4f7e9c5b1a3d8e7f6a5b"
    assert [image.name for image in captcha.images] == ["bigImage", "smallImage"]
    assert all(image.content_type == "image/png" for image in captcha.images)
    assert captcha.extra["secretKey"] == "kQ3fT9zL"


def test_parse_check_sign_and_wrong_answer_and_expired_token():
    assert miit_icp.parse_check(sample("icp_check_ok.json")).startswith("eyJzaWdu")
    with pytest.raises(WrongAnswer, match="验证失败"):
        miit_icp.parse_check(sample("icp_check_fail.json"))
    with pytest.raises(TokenExpired):
        miit_icp.parse_check(sample("icp_token_expired.json"))


def test_parse_query_rows():
    records = miit_icp.parse_query(sample("icp_query.json"))
    assert [record.service_licence for record in records] == ["京ICP备19012345号-1", "京ICP备19012345号-2"]
    assert records[0].to_dict() == {
        "unitName": "北京北辰算力科技有限公司",
        "natureName": "企业",
        "mainLicence": "京ICP备19012345号",
        "serviceLicence": "京ICP备19012345号-1",
        "domain": "beichen-gpu.example.cn",
        "updateRecordTime": "2024-03-01 10:00:00",
    }
    with pytest.raises(TokenExpired):
        miit_icp.parse_query(sample("icp_token_expired.json"))
    with pytest.raises(MalformedResponse):
        miit_icp.parse_query({"code": 200, "success": True, "params": {"list": "nope"}})


# ---------------------------------------------------------------- licence parsers
def test_parse_licence_query_items_scope_dates():
    first, second = miit_licence.parse_query(sample("licence_query.json"))
    assert first.business_items == ("B11", "B14") and first.b11_excludes_resource_collab is True
    assert first.coverage == ("北京", "上海", "广东")
    assert first.issue_date == date(2019, 5, 20) and first.expiry_date == date(2029, 5, 20)
    assert second.status == "注销" and second.business_items == ("B25",)
    assert second.issue_date is not None and second.b11_excludes_resource_collab is None
    with pytest.raises(WrongAnswer):
        miit_licence.parse_query(sample("licence_wrong_answer.json"))
    captcha = miit_licence.parse_captcha(sample("licence_captcha.json"))
    assert captcha.uuid == "c0ffee00aa" and captcha.images[0].content_type == "image/png"


def test_envelope_errors_are_named():
    with pytest.raises(MalformedResponse, match="不是 JSON（HTTP 200") as broken:
        payload(result(b'{"code":200,"params":'))
    # The message is a msgid with its values, so a page can show it in its own language.
    assert broken.value.as_json() == {
        "msgid": "官方系统的回复不是 JSON（HTTP %(status)d，%(size)d 字节）",
        "params": {"status": 200, "size": 21},
    }
    with pytest.raises(Refused, match="HTTP 502"):
        payload(result(b"<html>bad gateway</html>", status=502))
    with pytest.raises(MalformedResponse, match="不是 JSON 对象"):
        payload(result(b"[1, 2]"))


def test_a_captcha_that_is_not_an_image_is_refused():
    script = base64.b64encode(b"<svg onload=alert(1)>").decode()
    with pytest.raises(MalformedResponse, match="不是 PNG/JPEG/GIF/WebP 图片"):
        decode_image(script, "bigImage")
    with pytest.raises(MalformedResponse):
        decode_image(None, "bigImage")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2029-05-20", date(2029, 5, 20)),
        ("2029年5月20日", date(2029, 5, 20)),
        ("2029/05/20 00:00", date(2029, 5, 20)),
        ("", None),
    ],
)
def test_dates(value, expected):
    assert parse_date(value) == expected


def test_bad_date_is_malformed():
    with pytest.raises(MalformedResponse):
        parse_date("2029-13-40")


# ---------------------------------------------------------------- live against the fake
@pytest.fixture
def fetch():
    client = HttpClient(
        HttpPolicy(allow_cidrs=("127.0.0.0/8",), min_interval=0, retries=0, total_timeout=3),
        rate_limiter=HostRateLimiter(),
    )
    purposes: list[str] = []

    def _fetch(url, *, method="POST", data=None, json=None, headers=None, purpose):
        purposes.append(purpose)
        return client.fetch(url, method=method, data=data, json=json, headers=headers)

    _fetch.purposes = purposes
    yield _fetch
    client.close()


def test_icp_client_full_flow_against_the_fake(fake, fetch):
    client = miit_icp.IcpClient(fetch, fake.icp_base)
    token = client.authenticate()
    captcha = client.captcha(token)
    with pytest.raises(WrongAnswer):
        client.check(token, captcha.uuid, str(fake.icp_answer(captcha.uuid) + 40))
    sign = client.check(token, captcha.uuid, str(fake.icp_answer(captcha.uuid)))
    records, raw = client.query(token, sign, captcha.uuid, "北京北辰算力科技有限公司")
    assert records[0].main_licence == "京ICP备19012345号" and raw.status == 200
    assert fetch.purposes == ["icp_auth", "icp_captcha", "icp_check", "icp_check", "icp_query"]
    fake.expire_tokens()
    with pytest.raises(TokenExpired):
        client.captcha(token)


def test_licence_client_full_flow_against_the_fake(fake, fetch):
    client = miit_licence.LicenceClient(fetch, fake.licence_base)
    captcha = client.captcha()
    records, _ = client.query("北京北辰算力科技有限公司", captcha.uuid, fake.licence_answer(captcha.uuid))
    assert records[0].licence_no == "B1-20190001" and records[0].business_items == ("B11", "B14")
    with pytest.raises(Exception, match="验证码已失效"):
        client.query("北京北辰算力科技有限公司", captcha.uuid, "ANY")  # a captcha is good for one try

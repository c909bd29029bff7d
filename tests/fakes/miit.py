"""A fake of the official lookup systems on loopback, with the documented endpoints and field names.

ICP filing system (DOMAIN.md §3), under /icpproject_query/api/:
  POST auth                               form authKey = md5("testtest" + timeStamp), timeStamp
                                          -> params {bussiness: token, expire: ms, refresh}
  POST image/getCheckImagePoint           {clientUid}, header token -> params {bigImage, smallImage, uuid}
  POST image/checkImage                   {key: uuid, value: x}, header token -> params = sign
  POST icpAbbreviateInfo/queryByCondition {pageNum, pageSize, unitName, serviceType}, headers token/sign/uuid
                                          -> params {list: [{unitName, natureName, mainLicence, ...}], total}
Six wrong answers lock a uuid (as the real system does); a sign is good for one query.

Licence system (our assumed API, see scrapers/miit_licence.py), under /dxxzsp/api/:
  POST captcha        -> data {captchaId, image}
  POST licence/query  {companyName, captchaId, captchaCode} -> data {list: [...], total}; 4001 wrong answer,
                      4002 captcha expired/unknown; a captcha is good for one attempt.

Knobs for tests: `expire_tokens()`, `malformed` (endpoint names answered with broken JSON), `delays`
(endpoint name -> seconds to wait before answering), `icp_records` / `licence_records` (by name).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import itertools
import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.fakes.png import png

ICP_PREFIX = "/icpproject_query/api/"
LICENCE_PREFIX = "/dxxzsp/api/"
TOKEN_TTL_MS = 300_000
SLIDER_TOLERANCE = 3
LOCK_AFTER = 6
MAX_DELAY = 10.0

ICP_ENDPOINTS = {
    "auth": "icp_auth",
    "image/getCheckImagePoint": "icp_captcha",
    "image/checkImage": "icp_check",
    "icpAbbreviateInfo/queryByCondition": "icp_query",
}
LICENCE_ENDPOINTS = {"captcha": "licence_captcha", "licence/query": "licence_query"}


def _ok(params: Any, key: str = "params") -> dict[str, Any]:
    return {"code": 200, "msg": "操作成功", "success": True, key: params}


class FakeMiit:
    """Both official systems in one loopback server; state lives here so tests can look inside."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.tokens: dict[str, float] = {}
        self.captchas: dict[str, dict[str, Any]] = {}
        self.signs: dict[str, tuple[str, str]] = {}
        self.licence_captchas: dict[str, dict[str, Any]] = {}
        self.icp_records: dict[str, list[dict[str, Any]]] = {}
        self.licence_records: dict[str, list[dict[str, Any]]] = {}
        self.malformed: set[str] = set()
        self.delays: dict[str, float] = {}
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self._counter = itertools.count(1)
        self.server = _Server(("127.0.0.1", 0), _Handler)
        self.server.fake = self
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True
        )

    # ---------------------------------------------------------------- lifecycle
    @property
    def base(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def icp_base(self) -> str:
        """Base URL of the ICP API."""
        return self.base + ICP_PREFIX

    @property
    def licence_base(self) -> str:
        """Base URL of the licence API."""
        return self.base + LICENCE_PREFIX

    def __enter__(self) -> FakeMiit:
        self.thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)

    # ---------------------------------------------------------------- knobs and peeking
    def expire_tokens(self) -> None:
        """Make every issued token expired."""
        with self.lock:
            for token in self.tokens:
                self.tokens[token] = 0.0

    def icp_answer(self, captcha_uuid: str) -> int:
        """The x offset that solves an ICP captcha."""
        return self.captchas[captcha_uuid]["x"]

    def licence_answer(self, captcha_id: str) -> str:
        """The text that solves a licence captcha."""
        return self.licence_captchas[captcha_id]["code"]

    def count(self, endpoint: str) -> int:
        """How often an endpoint ("icp_auth", "licence_query", ...) was called."""
        return sum(1 for name, _ in self.calls if name == endpoint)

    # ---------------------------------------------------------------- ICP handlers
    def _token_ok(self, headers: dict[str, str]) -> bool:
        expiry = self.tokens.get(headers.get("token", ""))
        return expiry is not None and expiry > time.time()

    def icp_auth(self, form: dict[str, str], _body: Any, _headers: dict[str, str]) -> dict[str, Any]:
        stamp = form.get("timeStamp", "")
        expected = hashlib.md5(f"testtest{stamp}".encode(), usedforsecurity=False).hexdigest()
        if form.get("authKey") != expected:
            return {"code": 400, "msg": "authKey 错误", "success": False}
        token = "tok-" + uuid.uuid4().hex
        self.tokens[token] = time.time() + TOKEN_TTL_MS / 1000
        return _ok({"bussiness": token, "expire": TOKEN_TTL_MS, "refresh": "ref-" + token})

    def icp_captcha(self, _form: dict[str, str], body: Any, headers: dict[str, str]) -> dict[str, Any]:
        if not self._token_ok(headers):
            return {"code": 401, "msg": "token过期", "success": False}
        if not isinstance(body, dict) or not body.get("clientUid"):
            return {"code": 400, "msg": "缺少 clientUid", "success": False}
        number = next(self._counter)
        x = 40 + (number * 37) % 200
        key = uuid.uuid4().hex
        self.captchas[key] = {"x": x, "failures": 0, "token": headers["token"], "used": False}
        big = base64.b64encode(png(300, 60, gap_x=x)).decode()
        small = base64.b64encode(png(12, 60, colour=(30, 40, 60))).decode()
        return _ok(
            {"bigImage": big, "smallImage": small, "uuid": key, "height": "60", "secretKey": "k" + key[:8]}
        )

    def icp_check(self, _form: dict[str, str], body: Any, headers: dict[str, str]) -> dict[str, Any]:
        if not self._token_ok(headers):
            return {"code": 401, "msg": "token过期", "success": False}
        captcha = self.captchas.get(body.get("key", "")) if isinstance(body, dict) else None
        if captcha is None or captcha["failures"] >= LOCK_AFTER or captcha["used"]:
            return {"code": 500, "msg": "验证码已失效", "success": False}
        try:
            value = int(str(body.get("value")))
        except ValueError:
            value = -999
        if abs(value - captcha["x"]) > SLIDER_TOLERANCE:
            captcha["failures"] += 1
            return {"code": 500, "msg": "验证失败", "success": False}
        captcha["used"] = True
        sign = "sign-" + uuid.uuid4().hex
        self.signs[sign] = (body["key"], headers["token"])
        return _ok(sign)

    def icp_query(self, _form: dict[str, str], body: Any, headers: dict[str, str]) -> dict[str, Any]:
        if not self._token_ok(headers):
            return {"code": 401, "msg": "token过期", "success": False}
        bound = self.signs.pop(headers.get("sign", ""), None)
        if bound != (headers.get("uuid"), headers.get("token")):
            return {"code": 403, "msg": "sign 无效", "success": False}
        name = body.get("unitName", "") if isinstance(body, dict) else ""
        rows = self.icp_records.get(name, [])
        return _ok({"list": rows, "total": len(rows), "pageNum": 1, "pageSize": body.get("pageSize")})

    # ---------------------------------------------------------------- licence handlers
    def licence_captcha(self, _form: dict[str, str], _body: Any, _headers: dict[str, str]) -> dict[str, Any]:
        number = next(self._counter)
        key = uuid.uuid4().hex
        code = f"K{number % 10}P{(number * 7) % 10}"
        self.licence_captchas[key] = {"code": code, "used": False}
        image = "data:image/png;base64," + base64.b64encode(png(80, 30, colour=(200, 180, 90))).decode()
        return _ok({"captchaId": key, "image": image}, key="data")

    def licence_query(self, _form: dict[str, str], body: Any, _headers: dict[str, str]) -> dict[str, Any]:
        body = body if isinstance(body, dict) else {}
        captcha = self.licence_captchas.get(body.get("captchaId", ""))
        if captcha is None or captcha["used"]:
            return {"code": 4002, "msg": "验证码已过期"}
        captcha["used"] = True
        if str(body.get("captchaCode", "")).upper() != captcha["code"].upper():
            return {"code": 4001, "msg": "验证码错误"}
        rows = self.licence_records.get(body.get("companyName", ""), [])
        return _ok({"list": rows, "total": len(rows)}, key="data")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeMiit


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in two writes; no 40 ms delayed-ACK stalls

    def log_message(self, *_args: Any) -> None:
        pass

    def _reply(self, status: int, body: bytes) -> None:
        # The client may have given up (timeout tests): a closed socket is not an error here.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.send_response(status)
            self.send_header("Content-Type", "application/json;charset=UTF-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    def do_POST(self) -> None:
        path = urlsplit(self.path).path
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if path.startswith(ICP_PREFIX):
            endpoint = ICP_ENDPOINTS.get(path[len(ICP_PREFIX) :])
        elif path.startswith(LICENCE_PREFIX):
            endpoint = LICENCE_ENDPOINTS.get(path[len(LICENCE_PREFIX) :])
        else:
            endpoint = None
        if endpoint is None:
            self._reply(404, b'{"code":404,"msg":"not found"}')
            return
        fake = self.server.fake
        headers = {key.lower(): value for key, value in self.headers.items()}
        form = {key: values[0] for key, values in parse_qs(raw.decode("utf-8", "replace")).items()}
        try:
            body = json.loads(raw) if raw and "json" in headers.get("content-type", "") else None
        except ValueError:
            body = None
        with fake.lock:
            fake.calls.append((endpoint, {"form": form, "json": body, "headers": headers}))
            delay = fake.delays.get(endpoint, 0.0)
            broken = endpoint in fake.malformed
        if delay:
            time.sleep(min(delay, MAX_DELAY))
        if broken:
            self._reply(200, b'{"code":200,"msg":"\xe6\x93\x8d\xe4\xbd\x9c","params":{"list":[{"unitName":')
            return
        with fake.lock:
            reply = getattr(fake, endpoint)(form, body, headers)
        self._reply(200, json.dumps(reply, ensure_ascii=False).encode("utf-8"))

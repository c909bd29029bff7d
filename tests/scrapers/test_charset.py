"""Charset detection: BOM, HTTP header, <meta>, detection, and the GBK family decoded as GB18030."""

from __future__ import annotations

import codecs

from scrapers.charset import canonical_encoding, decode, header_charset, meta_charset

TEXT = "版权所有：广东华南智算网络科技有限公司，粤ICP备2021098765号，专注 GPU 服务器租用与机柜托管服务。" * 3


def test_bom_wins_over_everything():
    text, encoding = decode(codecs.BOM_UTF8 + TEXT.encode("utf-8"), "text/html; charset=gbk")
    assert text == TEXT and encoding == "utf-8-sig"


def test_header_charset_then_meta_then_detection():
    gbk = TEXT.encode("gbk")
    assert decode(gbk, "text/html; charset=GB2312") == (TEXT, "gb18030")
    page = b'<meta http-equiv="Content-Type" content="text/html; charset=gbk">' + gbk
    assert decode(page, "text/html")[1] == "gb18030"
    assert decode(gbk, "text/html") == (TEXT, "gb18030")  # undeclared: detected


def test_wrong_declaration_falls_back_instead_of_garbage():
    utf8 = TEXT.encode("utf-8")
    text, encoding = decode(utf8, "text/html; charset=us-ascii")
    assert encoding == "utf-8" and text == TEXT


def test_unknown_label_is_ignored_and_binary_never_raises():
    assert canonical_encoding("x-no-such-charset") is None
    assert decode(TEXT.encode("utf-8"), "text/html; charset=x-no-such")[0] == TEXT
    text, _ = decode(bytes(range(256)) * 4, "application/octet-stream")
    assert isinstance(text, str)


def test_header_and_meta_parsing():
    assert header_charset('text/html; charset="UTF-8"') == "UTF-8"
    assert header_charset("text/html") is None
    assert meta_charset(b"<html><head><meta charset='gb2312'>") == "gb2312"
    assert meta_charset(b"<p>no meta</p>") is None

"""Extract filing and licence numbers and the copyright company name from a provider's web pages.

`parse(page, base_url)` is pure: bytes or text in, a FooterResult out. `scrape_site(url, fetch)`
fetches the home page plus up to three same-site pages linked as about / licence / 资质 / 证照 through
the fetch function it is given (scrapers.http.HttpClient.fetch in the app), and merges the results.

Chinese sites write these numbers in many ways; the cases handled here (each has a saved page under
tests/data/footers): GBK/GB2312 pages, full-width digits and letters, &nbsp; and line breaks inside
numbers, numbers split across tags, the number as the text of a link to beian.miit.gov.cn, the
recordcode= parameter of a beian.gov.cn link, image alt/title text, and Chinese or English labels.

The company name comes, in this order, from a copyright line (© / 版权所有), a label (主办单位,
运营单位, 网站所有者, 经营主体 ...), a filing line naming it, or a footer line that is nothing but a
name with a suffix (有限公司, 集团, 研究院, Co., Ltd., Inc. ...); sentences and menu entries never count.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import parse_qsl, urljoin, urlsplit

from bs4 import BeautifulSoup, CData, NavigableString, Tag

from app.core import provinces
from app.vetting import identifiers as ids
from benchmarks.messages import message as _
from scrapers import charset
from scrapers.http import FetchError

logger = logging.getLogger(__name__)

#: Order in which identifier kinds are listed (and later ones lose to earlier ones on ties).
KIND_ORDER = ("icp_filing", "icp_licence", "licence", "psb_filing", "uscc")
#: Where a number was found, strongest first: a duplicate keeps the strongest source.
SOURCES = ("link", "text", "img_alt", "title", "recordcode")
REGISTRY_HOSTS = ("beian.miit.gov.cn", "beian.gov.cn")
MAX_LINKED_PAGES = 3
#: A name on a line of its own counts only among the page's last lines (its footer), not in the body.
FOOTER_LINES = 40

_DROP_TAGS = ("script", "style", "noscript", "template", "svg", "head", "iframe", "object")
_BLOCK_TAGS = frozenset(
    (
        *("address", "article", "aside", "blockquote", "body", "br", "button", "dd", "details"),
        *("dialog", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1"),
        *("h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main", "nav", "ol", "option", "p"),
        *("pre", "section", "select", "summary", "table", "tbody", "td", "tfoot", "th", "thead"),
        *("tr", "ul"),
    )
)
_INVISIBLE = re.compile("[\u00ad\u180e\u200b-\u200f\u2028\u2029\u2060-\u2064\ufeff]")
_SPACES = re.compile(r"[ \t\r\f\v]+")
# Labels written with spaces inside ("I C P 备", "公 网 安 备") are joined before scanning.
_SPACED_LABELS = (
    (re.compile(r"I\s*C\s*P\s*([备證证])", re.I), r"ICP\1"),
    (re.compile(r"公\s*网\s*安\s*备"), "公网安备"),
)
# A number split by spaces or line breaks after its label; joined when the digits add up to a valid length.
_SPLIT_NUMBER = re.compile(
    r"(?P<label>公网安备|ICP备|ICP证|(?<![A-Z0-9])[AB][12](?:\s*[.、·/]\s*[AB][12])*\s*-)"
    r"(?P<gap>\s*:?\s*)(?P<digits>\d[\d \t\n]*\d)",
    re.I,
)
# A line can only hold a number if it has one of these (labels, licence classes, an 18-char code).
_HINT = re.compile(r"ICP|公网安备|[AB][12]|[0-9A-Z]{18}", re.I)
_DIGIT_LENGTHS = {"公网安备": (14,), "ICP备": (8, 10), "ICP证": (6,)}
_LICENCE_DIGITS = (8,)

_COPYRIGHT = re.compile(r"©|\(c\)|copyright|版权所有|版权", re.I)
_OPERATOR = re.compile(
    r"(?:主办单位|主办方|开办单位|运营单位|运营方|运营主体|经营主体|经营单位|网站所有者|网站所有人|"
    r"主体名称|公司名称|operated by|owned by)\s*:?\s*",
    re.I,
)
_NOISE = re.compile(
    r"all\s+rights\s+reserved\.?|copyright|版权所有|保留所有权利|保留一切权利|版权|所有权利|©|\(c\)|"
    r"(?:19|20)\d{2}(?:\s*[-~至]\s*(?:19|20)?\d{2,4})?\s*年?",
    re.I,
)
_HAN = "\u3400-\u4dbf\u4e00-\u9fff"
_ZH_COMPANY = re.compile(
    rf"[{_HAN}A-Za-z][{_HAN}A-Za-z0-9()·&]{{1,60}}?(?:股份有限公司|有限责任公司|有限公司|集团公司|公司)"
)
# Bodies named without 公司: groups and institutes (tried only when no 公司 name is in the text).
_ZH_BODY = re.compile(rf"[{_HAN}A-Za-z][{_HAN}A-Za-z0-9()·&]{{1,60}}?(?:集团|研究院|研究所)")
_EN_SUFFIX = r"(?:Co\.,?\s*Ltd\.?|Company\s+Limited|Limited|Ltd\.?|Inc\.?|Corporation|Corp\.?|LLC)"
_EN_COMPANY = re.compile(rf"[A-Z][A-Za-z0-9&'.-]*(?:\s+[A-Za-z0-9&'.-]+){{0,8}}?,?\s+{_EN_SUFFIX}")
# A line that is nothing but a name: Chinese with a full suffix, or capitalised English words and a suffix.
_LONE_ZH = re.compile(
    rf"[{_HAN}A-Za-z][{_HAN}A-Za-z0-9()·&]{{1,40}}(?:股份有限公司|有限责任公司|有限公司|集团公司|集团|研究院|研究所)"
)
_EN_WORD = r"(?:[A-Z0-9(][A-Za-z0-9&'.()-]*|&|and|of)"
_LONE_EN = re.compile(rf"{_EN_WORD}(?:\s+{_EN_WORD}){{0,8}},?\s+{_EN_SUFFIX}")
# Words that make a line prose or a menu entry ("关于集团", "我们是一家……有限公司"), never a name.
_NOT_A_NAME = re.compile(
    r"^(?:关于|加入|联系|走进|了解|进入|返回|访问|欢迎|旗下|下属)|我们|本站|本网站|本公司|是一家|致力|为您|提供|服务于"
)
_TOKEN_SPLIT = re.compile(r"[\s|｜/;；,，。:：、]+")
_FILING_LINE = re.compile(r"ICP备|ICP证|公网安备|[AB][12]-\d")
_LINK_WORDS = re.compile(
    r"关于|资质|证照|许可证|经营许可|营业执照|about|licen[cs]e|qualification|certificat", re.I
)


class ParseError(ValueError):
    """The input is not a page that can be parsed (e.g. empty)."""


@dataclass(frozen=True)
class FoundIdentifier:
    """A number found on a page, in the identifier parser's kind and canonical form."""

    kind: str
    normalized: str
    source: str
    valid: bool = True
    text: str = ""
    problems: tuple[str, ...] = ()
    url: str = ""

    def to_dict(self, *, full: bool = False) -> dict[str, Any]:
        """{"kind", "normalized", "source"} (+ url when known); full adds validity, text and problems."""
        data: dict[str, Any] = {"kind": self.kind, "normalized": self.normalized, "source": self.source}
        if self.url:
            data["url"] = self.url
        if full:
            data.update({"valid": self.valid, "text": self.text, "problems": list(self.problems)})
        return data


@dataclass(frozen=True)
class FooterResult:
    """What one page (or a merged site) shows: its numbers, company name and pages worth following."""

    identifiers: tuple[FoundIdentifier, ...] = ()
    company_name: str | None = None
    company_name_source: str | None = None
    links: tuple[str, ...] = ()
    encoding: str = ""

    def to_dict(self, *, full: bool = False) -> dict[str, Any]:
        """JSON form: {"identifiers": [...], "company_name": ...} (full adds details)."""
        data: dict[str, Any] = {
            "identifiers": [identifier.to_dict(full=full) for identifier in self.identifiers],
            "company_name": self.company_name,
        }
        if full:
            data.update(
                {
                    "company_name_source": self.company_name_source,
                    "links": list(self.links),
                    "encoding": self.encoding,
                }
            )
        return data


# ------------------------------------------------------------------------------------------------ text
def clean_text(text: str) -> str:
    """NFKC-fold text (full-width to ASCII, &nbsp; to space), drop invisible chars, tidy spaces."""
    text = unicodedata.normalize("NFKC", _INVISIBLE.sub("", text))
    text = text.replace("\uff0d", "-").replace("\u2014", "-").replace("\u2013", "-").replace("\u2212", "-")
    for pattern, replacement in _SPACED_LABELS:
        text = pattern.sub(replacement, text)
    return _SPACES.sub(" ", text)


def _join_digits(match: re.Match[str]) -> str:
    """Join a number's digit groups when together they have a length the label allows."""
    label = match.group("label")
    key = re.sub(r"\s+", "", label).upper()
    lengths = _DIGIT_LENGTHS.get(key, _LICENCE_DIGITS)
    groups = match.group("digits").split()
    for count in range(len(groups), 1, -1):
        joined = "".join(groups[:count])
        if len(joined) in lengths:
            rest = match.group("digits")
            # Keep whatever came after the joined groups exactly as it was.
            consumed = 0
            for group in groups[:count]:
                consumed = rest.index(group, consumed) + len(group)
            return f"{label}{match.group('gap')}{joined}{rest[consumed:]}"
    return match.group(0)


def join_split_numbers(text: str) -> str:
    """Remove spaces and line breaks inside numbers that follow a filing or licence label."""
    return _SPLIT_NUMBER.sub(_join_digits, text)


def _soup(page: bytes | str, content_type: str | None) -> tuple[BeautifulSoup, str]:
    if isinstance(page, bytes):
        text, encoding = charset.decode(page, content_type)
    else:
        text, encoding = page, "unicode"
    if not text.strip():
        raise ParseError(_("页面为空"))
    return BeautifulSoup(text, "html.parser"), encoding


@dataclass
class _Page:
    """One walk over the tree: visible text split at block elements, and the tags the passes need."""

    lines: list[str]
    raw_text: str
    anchors: list[Tag]
    images: list[Tag]
    titled: list[Tag]


_END = object()  # marks the end of a block element during the walk
_TEXT_TYPES = (NavigableString, CData)


def _walk(soup: BeautifulSoup) -> _Page:
    """Walk the tree once (iteratively: deep pages must not hit the recursion limit), skipping scripts,
    styles and comments; inline elements are joined without spaces, block elements start new lines."""
    parts: list[str] = []
    anchors: list[Tag] = []
    images: list[Tag] = []
    titled: list[Tag] = []
    stack: list[Any] = list(reversed(soup.contents))
    while stack:
        node = stack.pop()
        if node is _END:
            parts.append("\n")
        elif type(node) in _TEXT_TYPES:
            parts.append(str(node))
        elif isinstance(node, Tag) and node.name not in _DROP_TAGS:
            if node.name == "a" and node.get("href"):
                anchors.append(node)
            elif node.name == "img":
                images.append(node)
            if node.name != "img" and node.get("title"):
                titled.append(node)
            if node.name in _BLOCK_TAGS:
                parts.append("\n")
                stack.append(_END)
            stack.extend(reversed(node.contents))
    raw = "".join(parts)
    lines = (line.strip() for line in clean_text(raw).split("\n"))
    return _Page([line for line in lines if line], raw, anchors, images, titled)


# ------------------------------------------------------------------------------------------------ numbers
def _found(identifier: ids.Identifier, source: str) -> FoundIdentifier | None:
    if identifier.kind == "unknown" or not identifier.normalized:
        return None
    return FoundIdentifier(
        kind=identifier.kind,
        normalized=identifier.normalized,
        source=source,
        valid=identifier.valid,
        text=identifier.input,
        problems=tuple(identifier.problems),
    )


def candidate_text(lines: list[str]) -> str:
    """Only the lines that may hold a number (plus one before and two after, for numbers split across
    lines); separate stretches are kept apart so a number can never be glued across them."""
    keep: set[int] = set()
    for index, line in enumerate(lines):
        if _HINT.search(line):
            keep.update(range(max(0, index - 1), min(len(lines), index + 3)))
    chunks: list[str] = []
    previous = -2
    for index in sorted(keep):
        chunks.append(lines[index] if index == previous + 1 or not chunks else "\n¦\n" + lines[index])
        previous = index
    return "\n".join(chunks)


def _scan(text: str, source: str) -> list[FoundIdentifier]:
    text = join_split_numbers(clean_text(text))
    return [found for item in ids.find_identifiers(text) if (found := _found(item, source)) is not None]


def _is_registry_link(href: str) -> bool:
    host = (urlsplit(href).hostname or "").lower()
    return any(host == registry or host.endswith("." + registry) for registry in REGISTRY_HOSTS)


def _link_text(anchor: Tag) -> str:
    """Text of a link including the alt/title of images inside it."""
    pieces = [anchor.get_text("")]
    pieces += [str(img.get(attr) or "") for img in anchor.find_all("img") for attr in ("alt", "title")]
    pieces.append(str(anchor.get("title") or ""))
    return " ".join(piece for piece in pieces if piece)


def _recordcode(href: str) -> FoundIdentifier | None:
    """A public-security filing number from the recordcode= parameter of a beian.gov.cn link."""
    params = {key.lower(): value for key, value in parse_qsl(urlsplit(href).query)}
    digits = re.sub(r"\D", "", clean_text(params.get("recordcode", "")))
    if not digits:
        return None
    province = provinces.by_code(digits[:2])
    prefix = province.abbreviation if province else ""
    return _found(ids.parse_psb_filing(f"{prefix}公网安备{digits}号"), "recordcode")


def _from_links(anchors: list[Tag]) -> list[FoundIdentifier]:
    found: list[FoundIdentifier] = []
    for anchor in anchors:
        href = str(anchor["href"])
        if not _is_registry_link(href):
            continue
        found += _scan(_link_text(anchor), "link")
        code = _recordcode(href)
        if code is not None:
            found.append(code)
    return found


def _from_attributes(page: _Page) -> list[FoundIdentifier]:
    found: list[FoundIdentifier] = []
    for img in page.images:
        found += _scan(str(img.get("alt") or ""), "img_alt")
        found += _scan(str(img.get("title") or ""), "title")
    for tag in page.titled:
        found += _scan(str(tag["title"]), "title")
    return found


def _rank(item: FoundIdentifier) -> tuple[int, str, int]:
    kind = KIND_ORDER.index(item.kind) if item.kind in KIND_ORDER else len(KIND_ORDER)
    return (kind, item.normalized, SOURCES.index(item.source))


def merge_identifiers(items: Iterable[FoundIdentifier]) -> tuple[FoundIdentifier, ...]:
    """One entry per (kind, normalized number), keeping the strongest source, sorted by kind."""
    best: dict[tuple[str, str], FoundIdentifier] = {}
    for item in items:
        key = (item.kind, item.normalized)
        if key not in best or SOURCES.index(item.source) < SOURCES.index(best[key].source):
            best[key] = item
    return tuple(sorted(best.values(), key=_rank))


# ------------------------------------------------------------------------------------------------ company
def _company_in(text: str) -> str | None:
    stripped = _NOISE.sub(" ", text)
    tokens = _TOKEN_SPLIT.split(stripped)
    for pattern in (_ZH_COMPANY, _ZH_BODY):
        for token in tokens:
            match = pattern.search(token)
            if match:
                return match.group(0)
    match = _EN_COMPANY.search(stripped)
    return match.group(0).strip() if match else None


def _lone_name(lines: list[str]) -> str | None:
    """The last footer line that is only a company name (no copyright mark, no label), never a sentence."""
    for line in reversed(lines[-FOOTER_LINES:]):
        text = line.strip()
        if _NOT_A_NAME.search(text):
            continue
        if _LONE_ZH.fullmatch(text) or _LONE_EN.fullmatch(text):
            return text
    return None


def _operator_name(lines: list[str]) -> str | None:
    """A company named after an operator label, on the same line or (label alone) the next one."""
    for index in range(len(lines) - 1, -1, -1):
        label = _OPERATOR.search(lines[index])
        if label is None:
            continue
        rest = lines[index][label.end() :].strip()
        if not rest and index + 1 < len(lines):
            rest = lines[index + 1]
        name = _company_in(rest)
        if name:
            return name
    return None


def company_name(lines: list[str]) -> tuple[str | None, str | None]:
    """(name, source): the last copyright line naming a company, else a label, a filing line, a lone name."""
    for line in reversed(lines):
        if _COPYRIGHT.search(line):
            name = _company_in(line)
            if name:
                return name, "copyright"
    name = _operator_name(lines)
    if name:
        return name, "operator"
    for line in reversed(lines):
        if _FILING_LINE.search(line):
            name = _company_in(line)
            if name:
                return name, "filing_line"
    name = _lone_name(lines)
    if name:
        return name, "lone_line"
    return None, None


def _width_variants(char: str) -> str:
    """A regex class matching char and its full-width form (names are found in NFKC-folded text)."""
    if "!" <= char <= "~":
        return f"[{re.escape(char)}{re.escape(chr(ord(char) + 0xFEE0))}]"
    return re.escape(char)


def as_written(name: str | None, raw_text: str) -> str | None:
    """The name as the page writes it (e.g. with full-width brackets), when it can be found there."""
    if not name:
        return name
    pattern = re.compile(r"\s*".join(_width_variants(char) for char in name if not char.isspace()))
    match = pattern.search(_INVISIBLE.sub("", raw_text))
    return " ".join(match.group(0).split()) if match else name


def _attribute_lines(images: list[Tag]) -> list[str]:
    """Image alt/title texts as extra lines (footers made of pictures)."""
    texts = (str(img.get(attr) or "") for img in images for attr in ("alt", "title"))
    return [clean_text(text).strip() for text in texts if text.strip()]


# ------------------------------------------------------------------------------------------------ links
def _site(host: str) -> str:
    host = host.lower().rstrip(".")
    return host[4:] if host.startswith("www.") else host


def same_site(url: str, base_url: str) -> bool:
    """True when url is on the same host as base_url (www. ignored)."""
    return _site(urlsplit(url).hostname or "") == _site(urlsplit(base_url).hostname or "")


def candidate_links(anchors: Iterable[Tag], base_url: str) -> tuple[str, ...]:
    """Same-site links labelled about / licence / 资质 / 证照 ..., absolute, in page order."""
    if not base_url:
        return ()
    found: dict[str, None] = {}
    for anchor in anchors:
        if not anchor.get("href"):
            continue
        href = str(anchor["href"]).strip()
        if href.startswith(("#", "javascript:", "mailto:", "tel:")):
            continue
        label = " ".join([anchor.get_text(" "), str(anchor.get("title") or ""), href])
        if not _LINK_WORDS.search(label):
            continue
        url = urljoin(base_url, href).split("#", 1)[0]
        if urlsplit(url).scheme in ("http", "https") and same_site(url, base_url) and url != base_url:
            found[url] = None
    return tuple(found)


# ------------------------------------------------------------------------------------------------ entry
def parse(page: bytes | str, base_url: str = "", *, content_type: str | None = None) -> FooterResult:
    """Extract identifiers, the company name and follow-up links from one HTML page."""
    soup, encoding = _soup(page, content_type)
    walked = _walk(soup)
    found = _from_links(walked.anchors)
    found += _scan(candidate_text(walked.lines), "text")
    found += _from_attributes(walked)
    attribute_lines = _attribute_lines(walked.images)
    name, name_source = company_name(walked.lines + attribute_lines)
    return FooterResult(
        identifiers=merge_identifiers(found),
        company_name=as_written(name, walked.raw_text + "\n" + "\n".join(attribute_lines)),
        company_name_source=name_source,
        links=candidate_links(walked.anchors, base_url),
        encoding=encoding,
    )


@dataclass
class PageOutcome:
    """One page of a site scrape: the fetch (or its error) and what it showed."""

    url: str
    result: Any = None  # scrapers.http.FetchResult
    footer: FooterResult | None = None
    error: Exception | None = None


@dataclass
class SiteResult:
    """Every page fetched for a site and the merged footer result."""

    pages: list[PageOutcome] = field(default_factory=list)
    merged: FooterResult = field(default_factory=FooterResult)


def _parse_fetched(outcome: PageOutcome) -> None:
    result = outcome.result
    if not result.ok:
        status = result.status
        outcome.error = ParseError(_("页面返回 HTTP %(status)s，未解析", status=status))
        return
    try:
        outcome.footer = parse(result.body, result.final_url, content_type=result.headers.get("content-type"))
    except ParseError as exc:
        outcome.error = exc


def merge_pages(pages: list[PageOutcome]) -> FooterResult:
    """Merge the pages' results: numbers tagged with their page, the first company name found."""
    items: list[FoundIdentifier] = []
    name, name_source = None, None
    for page in pages:
        if page.footer is None:
            continue
        url = page.result.final_url if page.result is not None else page.url
        items += [replace(item, url=url) for item in page.footer.identifiers]
        if name is None and page.footer.company_name:
            name, name_source = page.footer.company_name, page.footer.company_name_source
    home = pages[0].footer if pages and pages[0].footer else FooterResult()
    return FooterResult(
        identifiers=merge_identifiers(items),
        company_name=name,
        company_name_source=name_source,
        links=home.links,
        encoding=home.encoding,
    )


def _fetch_page(outcome: PageOutcome, fetch: Callable[[str], Any]) -> None:
    try:
        outcome.result = fetch(outcome.url)
    except FetchError as exc:
        logger.info("page %s failed: %s", outcome.url, exc)
        outcome.error = exc
        outcome.result = exc.result
        return
    _parse_fetched(outcome)


def scrape_site(
    url: str,
    fetch: Callable[[str], Any],
    *,
    on_page: Callable[[PageOutcome], None] | None = None,
    max_linked_pages: int = MAX_LINKED_PAGES,
) -> SiteResult:
    """Fetch the home page and up to max_linked_pages linked about/licence pages, reporting each to on_page.

    A page that fails to load is kept with its error; when the home page fails nothing else is fetched.
    """
    home = PageOutcome(url=url)
    _fetch_page(home, fetch)
    pages = [home]
    if on_page is not None:
        on_page(home)
    links = home.footer.links if home.footer and home.error is None else ()
    for link in links[:max_linked_pages]:
        outcome = PageOutcome(url=link)
        _fetch_page(outcome, fetch)
        pages.append(outcome)
        if on_page is not None:
            on_page(outcome)
    return SiteResult(pages=pages, merged=merge_pages(pages))

"""The report's CJK font: a small pre-subset copy for common text, the full font as a per-glyph fallback.

Why: WeasyPrint embeds only the glyphs a document uses, but it has to parse the font to do so. With the
5 MB WenQuanYi Micro Hei collection that parse costs about 1.3 s per PDF when WeasyPrint falls back to
fontTools (no libharfbuzz-subset0), and still most of the render time with HarfBuzz. A copy cut down once
to GB2312 (the 6,763 common hanzi, Latin, CJK punctuation, full-width forms) is a quarter of the size;
characters outside it (rare hanzi, other scripts) fall through to the full font, listed second in
font-family, so nothing is lost.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import tempfile
import threading
from pathlib import Path

logger = logging.getLogger(__name__)

DEFAULT_FONT = Path("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc")
SUBSET_VERSION = "1"  # bump when the character set or options below change
_BUILD_LOCK = threading.Lock()
_BUILT: dict[str, Path] = {}  # source key -> a subset this process already built (copied, not rebuilt)

# Ranges kept besides GB2312 itself: Latin, general punctuation, CJK symbols, full-width forms, arrows, boxes.
_EXTRA_RANGES = (
    (0x20, 0x7E),
    (0xA0, 0x24F),
    (0x2000, 0x206F),
    (0x20A0, 0x20CF),
    (0x2100, 0x21FF),
    (0x2200, 0x22FF),
    (0x2460, 0x24FF),
    (0x2500, 0x25FF),
    (0x2600, 0x26FF),
    (0x3000, 0x303F),
    (0xFE30, 0xFE4F),
    (0xFF00, 0xFFEF),
)


def common_characters() -> set[int]:
    """Code points of GB2312 plus the extra ranges above."""
    points = {cp for low, high in _EXTRA_RANGES for cp in range(low, high + 1)}
    for first in range(0xA1, 0xF8):
        for second in range(0xA1, 0xFF):
            try:
                points.add(ord(bytes((first, second)).decode("gb2312")))
            except UnicodeDecodeError:
                continue
    return points


def _source_key(source: Path) -> str:
    stat = source.stat()
    text = f"{source.resolve()}|{stat.st_size}|{int(stat.st_mtime)}|{SUBSET_VERSION}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def subset_path(source: Path, cache_dir: Path) -> Path:
    """Where the pre-subset copy of `source` lives in `cache_dir`."""
    return cache_dir / f"report-font-{_source_key(source)}.ttf"


def build_subset(source: Path, target: Path) -> Path:
    """Cut `source` (face 0 of a .ttc/.ttf) down to common_characters() and write it atomically to target."""
    from fontTools import subset
    from fontTools.ttLib import TTFont

    font = TTFont(str(source), fontNumber=0, lazy=False)
    options = subset.Options()
    options.layout_features = ["*"]
    options.name_IDs = ["*"]
    options.notdef_outline = True
    options.hinting = False
    options.drop_tables += ["FFTM"]
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=common_characters())
    fonttools_logger = logging.getLogger("fontTools")
    level = fonttools_logger.level
    fonttools_logger.setLevel(logging.ERROR)  # it warns about tables it passes through unchanged
    try:
        subsetter.subset(font)
    finally:
        fonttools_logger.setLevel(level)
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=".font-", suffix=".ttf")
    os.close(handle)
    try:
        font.save(temporary)
        os.replace(temporary, target)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
    logger.info("built report font subset %s (%d bytes)", target, target.stat().st_size)
    return target


def _copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=".font-", suffix=".ttf")
    os.close(handle)
    try:
        shutil.copyfile(source, temporary)
        os.replace(temporary, target)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


def ensure_subset(source: Path, cache_dir: Path) -> Path | None:
    """Return the pre-subset font, building it on first use; None (full font only) when that fails."""
    target = subset_path(source, cache_dir)
    if target.exists():
        return target
    with _BUILD_LOCK:
        if target.exists():
            return target
        try:
            built = _BUILT.get(target.name)
            if built is not None and built.exists():
                _copy(built, target)
            else:
                build_subset(source, target)
            _BUILT[target.name] = target
            return target
        except Exception:
            logger.exception("could not build the report font subset from %s; using the full font", source)
            return None


def harfbuzz_subsetting() -> bool:
    """Whether WeasyPrint can subset fonts with HarfBuzz (libharfbuzz-subset0); fontTools is ~10x slower."""
    from weasyprint.text.ffi import harfbuzz, harfbuzz_subset

    return bool(harfbuzz_subset) and bool(harfbuzz.hb_version_atleast(4, 1, 0))

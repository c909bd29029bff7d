"""The pre-subset report font: built once, small, and rare characters still print via the full font."""

from __future__ import annotations

from pathlib import Path

from fontTools.ttLib import TTFont

from app.reports import fonts
from app.reports.fonts import DEFAULT_FONT, common_characters, ensure_subset, harfbuzz_subsetting, subset_path
from tests.reports.conftest import needs_poppler, pdf_fonts, pdf_text


def test_common_characters_cover_gb2312_and_latin():
    points = common_characters()
    assert 8000 < len(points) < 10000  # 6,763 hanzi + 682 GB2312 symbols + the extra ranges
    for char in "供应商尽职调查报告算力（）：；“”。、ABCxyz0-9%·×–—…":
        assert ord(char) in points, char
    assert ord("龘") not in points  # GBK, not GB2312: comes from the full font


def test_subset_is_built_once_and_reused(renderer, tmp_path: Path):
    built = renderer.regular_font
    assert built != DEFAULT_FONT and built.stat().st_size < DEFAULT_FONT.stat().st_size / 3
    cmap = TTFont(str(built)).getBestCmap()
    assert ord("算") in cmap and ord("A") in cmap and ord("龘") not in cmap
    # A second instance folder gets a copy of what this process built, not a second 2-second build.
    copied = ensure_subset(DEFAULT_FONT, tmp_path)
    assert copied == subset_path(DEFAULT_FONT, tmp_path) and copied.read_bytes() == built.read_bytes()
    assert ensure_subset(DEFAULT_FONT, tmp_path) == copied


def test_broken_font_falls_back_to_the_full_font(tmp_path: Path, monkeypatch):
    source = tmp_path / "broken.ttf"
    source.write_bytes(b"not a font")
    monkeypatch.setattr(fonts, "_BUILT", {})
    assert ensure_subset(source, tmp_path / "cache") is None


@needs_poppler
def test_rare_characters_print_from_the_full_font(renderer, tmp_path: Path):
    pdf = renderer.render("<html><body><p>常用字 ABC 与生僻字 龘𠀀</p></body></html>")
    assert "龘" in pdf_text(pdf.data) and "常用字" in pdf_text(pdf.data)
    names = " ".join(line.split()[0] for line in pdf_fonts(pdf.data, tmp_path))
    assert "GV-Sans" in names and "GV-Sans-Full" in names


def test_harfbuzz_subsetting_is_available():
    """libharfbuzz-subset0 lets WeasyPrint subset fonts ~10x faster than fontTools (perf/report_perf.py)."""
    assert harfbuzz_subsetting()

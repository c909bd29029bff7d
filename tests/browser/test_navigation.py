"""Headless Chromium: the navigation bar fits one line at 1280 and 1366 px, in Chinese and in English."""

from __future__ import annotations

import pytest

from tests.browser.test_page_sweep import browser, logged_in_page, site  # noqa: F401 - module fixtures

pytestmark = pytest.mark.browser

# Per link of the bar: its text, top edge, and how many line boxes its label takes; then the page's widths.
MEASURE_JS = """
() => {
  const bar = 'nav.navbar .navbar-collapse > .navbar-nav > .nav-item .nav-link';
  const links = [...document.querySelectorAll(bar)].filter(link => link.checkVisibility());
  const items = links.map(link => {
    // line boxes of the label's own text: a wrapped label has text more than half a line below its start
    const tops = [];
    const walker = document.createTreeWalker(link, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!node.nodeValue.trim()) continue;
      const range = document.createRange();
      range.selectNodeContents(node);
      for (const rect of range.getClientRects()) tops.push(rect.top);
    }
    const half = parseFloat(getComputedStyle(link).fontSize) / 2;
    const box = link.getBoundingClientRect();
    return {text: link.innerText.trim(), top: Math.round(box.top), bottom: Math.round(box.bottom),
            right: Math.round(box.right), lines: tops.some(top => top - Math.min(...tops) > half) ? 2 : 1};
  });
  const user = document.querySelector('#user-menu').getBoundingClientRect();
  return {
    items,
    user: {left: Math.round(user.left), right: Math.round(user.right), visible: user.width > 0},
    width: document.documentElement.clientWidth,
    scrollWidth: document.documentElement.scrollWidth,
    toggler: document.querySelector('.navbar-toggler').checkVisibility(),
  };
}
"""


@pytest.mark.parametrize("width", [1280, 1366])
@pytest.mark.parametrize("language", ["zh", "en"])
def test_the_bar_is_one_line_with_the_user_menu_on_screen(site, browser, width, language):  # noqa: F811
    page = logged_in_page(browser, site["url"], width=width, language=language)
    try:
        for path in ("/providers", "/jobs"):
            page.goto(path)
            found = page.evaluate(MEASURE_JS)
            where = f"{path} at {width} px [{language}]"
            assert not found["toggler"], f"{where}: the bar collapsed into the menu button"
            texts = [item["text"] for item in found["items"]]
            assert len(texts) >= 8, f"{where}: expected the links, language switch and user menu; got {texts}"
            wrapped = [item["text"] for item in found["items"] if item["lines"] != 1]
            assert not wrapped, f"{where}: labels wrap inside themselves: {wrapped}"
            tops = {item["text"]: item["top"] for item in found["items"]}
            spread = max(tops.values()) - min(tops.values())
            assert spread <= 2, f"{where}: links on more than one line: {tops}"
            user = found["user"]
            assert user["visible"] and user["left"] >= 0 and user["right"] <= found["width"], (
                f"{where}: the user menu is off-screen: {user}, viewport {found['width']} px"
            )
            assert found["scrollWidth"] <= found["width"], (
                f"{where}: the page scrolls sideways ({found['scrollWidth']} > {found['width']} px)"
            )
    finally:
        page.context.close()


def test_more_menu_holds_the_admin_links_and_marks_the_current_one(site, browser):  # noqa: F811
    from playwright.sync_api import expect

    page = logged_in_page(browser, site["url"], width=1280, language="zh")
    try:
        page.goto("/jobs")
        toggle = page.locator("#nav-more-toggle")
        expect(toggle).to_have_text("更多")
        expect(toggle).to_have_class("nav-link dropdown-toggle active")
        toggle.click()
        menu = page.locator("#nav-more .dropdown-menu")
        expect(menu).to_be_visible()
        expect(menu.locator("a.dropdown-item")).to_have_text(
            ["后台任务", "导入/导出", "问卷邀请", "用户管理", "系统设置"]
        )
        expect(menu.locator("a.dropdown-item.active")).to_have_text("后台任务")
        menu.locator("a", has_text="用户管理").click()
        page.wait_for_url(f"{site['url']}/admin/users")
        page.goto("/providers")
        expect(page.locator("#nav-more-toggle")).to_have_class("nav-link dropdown-toggle")
        page.goto("/lang/en")
        page.goto("/providers")
        expect(page.locator("#nav-more-toggle")).to_have_text("More")
    finally:
        page.context.close()

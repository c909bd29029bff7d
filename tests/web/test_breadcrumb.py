"""One trail above a provider's pages (templates/_breadcrumb.html), the same on every page that shows it."""

from __future__ import annotations

import re
from types import SimpleNamespace

TRAIL_LINKS = re.compile(r'<li class="breadcrumb-item(?: active)?"(?: aria-current="page")?>(.*?)</li>')


def trail(app, **arguments) -> list[str]:
    with app.test_request_context():
        template = app.jinja_env.from_string(
            '{% from "_breadcrumb.html" import provider_trail %}{{ provider_trail(**arguments) }}'
        )
        return TRAIL_LINKS.findall(template.render(arguments=arguments))


def test_the_trail_names_the_list_the_provider_the_section_and_this_page(app):
    provider = SimpleNamespace(id=7, short_name="示例算力", legal_name="北京示例算力科技有限公司")
    links = trail(app, provider=provider, here="#3", section="web.provider_lookups", section_label="官方查询")
    assert links == [
        '<a href="/providers">供应商列表</a>',
        '<a href="/providers/7">示例算力</a>',
        '<a href="/providers/7/lookups">官方查询</a>',
        "#3",
    ]
    assert trail(app, provider=None, here="<新供应商>") == [
        '<a href="/providers">供应商列表</a>',
        "&lt;新供应商&gt;",
    ]

"""Provider list: search by name or identifier, filters, sort, pagination, bad parameters."""

from __future__ import annotations

import re

import pytest
import sqlalchemy as sa
from markupsafe import escape

from app.core.errors import InvalidInput
from app.registry import provider_list


def names(html: str) -> list[str]:
    """Legal names in the list, in order."""
    return re.findall(r'<a class="fw-semibold" href="/providers/\d+">([^<]+)</a>', html)


@pytest.fixture
def catalogue(make_provider):
    make_provider(
        legal_name="北京星河算力科技有限公司",
        short_name="星河",
        status="approved",
        licences=[{"number_raw": "京B1-20190001", "business_items": "B11"}],
        filings=[{"number_raw": "京ICP备10046444号-9"}],
        datacenters=[{"name": "亦庄", "province": "北京"}],
        offers=[
            {
                "gpu_model": "H800",
                "gpus_per_node": 8,
                "bandwidth_type": "dedicated",
                "storage_type": "local_nvme",
            },
            {
                "gpu_model": "RTX 4090",
                "gpus_per_node": 4,
                "bandwidth_type": "shared",
                "storage_type": "cloud_disk",
            },
        ],
    )
    make_provider(
        legal_name="成都蜀算科技有限公司",
        registered_province="四川",
        status="candidate",
        uscc="91350100M000100Y43",
        licences=[{"number_raw": "蜀B2-20230001", "business_items": "B25"}],
        offers=[{"gpu_model": "A100", "gpus_per_node": 8, "bandwidth_type": "shared", "storage_type": "nfs"}],
    )
    make_provider(
        legal_name="广州南方云计算有限公司",
        registered_province="广东",
        status="rejected",
        datacenters=[{"name": "贵安", "province": "贵州"}],
        offers=[
            {
                "gpu_model": "H800",
                "gpus_per_node": 8,
                "bandwidth_type": "unknown",
                "storage_type": "cloud_disk",
            }
        ],
    )


def test_list_rows_show_the_summary(login, catalogue):
    response = login("viewer").get("/providers")
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    assert names(html) == [
        "北京星河算力科技有限公司",
        "广州南方云计算有限公司",
        "成都蜀算科技有限公司",
    ] or set(names(html)) == {"北京星河算力科技有限公司", "广州南方云计算有限公司", "成都蜀算科技有限公司"}
    assert "星河" in html and "京B1-20190001" in html and "(B1)" in html
    assert "RTX 4090" in html and "已批准" in html and "已拒绝" in html
    assert "共 3 家供应商" in html
    # the home page is the dashboard now; an old "/?..." list link still reaches the same list
    moved = login("viewer", "v2").get("/?sort=name", follow_redirects=True)
    assert moved.request.path == "/providers" and names(moved.get_data(as_text=True)) == names(html)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("星河", {"北京星河算力科技有限公司"}),
        ("南方云", {"广州南方云计算有限公司"}),
        ("京b1-20190001", {"北京星河算力科技有限公司"}),
        ("京Ｂ１－２０１９０００１", {"北京星河算力科技有限公司"}),  # full-width, as pasted from a PDF
        ("京ＩＣＰ备10046444号", {"北京星河算力科技有限公司"}),
        ("91350100m000100y43", {"成都蜀算科技有限公司"}),
        ("没有这家", set()),
    ],
)
def test_search_by_name_and_identifier(login, catalogue, query, expected):
    html = login("viewer").get("/providers", query_string={"q": query}).get_data(as_text=True)
    assert set(names(html)) == expected
    assert f'value="{query}"' in html  # the search box keeps the text
    if not expected:
        assert 'id="no-results"' in html


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"province": "四川"}, {"成都蜀算科技有限公司"}),
        ({"province": "贵州"}, {"广州南方云计算有限公司"}),  # a datacenter there counts
        ({"gpu_model": "h800"}, {"北京星河算力科技有限公司", "广州南方云计算有限公司"}),
        ({"bandwidth_type": "shared"}, {"北京星河算力科技有限公司", "成都蜀算科技有限公司"}),
        ({"storage_type": "nfs"}, {"成都蜀算科技有限公司"}),
        ({"status": "rejected"}, {"广州南方云计算有限公司"}),
        ({"gpu_model": "H800", "storage_type": "local_nvme"}, {"北京星河算力科技有限公司"}),
    ],
)
def test_filters(login, catalogue, params, expected):
    response = login("viewer").get("/providers", query_string=params)
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    assert set(names(html)) == expected
    for key, value in params.items():
        if key in ("province", "status", "bandwidth_type", "storage_type"):
            assert f'<option value="{value}" selected>' in html


def test_province_select_has_all_31(login):
    html = login("viewer").get("/providers").get_data(as_text=True)
    select = re.search(r'<select[^>]*id="province".*?</select>', html, re.S).group(0)
    assert select.count("<option") == 32  # "all" plus 31 provinces


def test_sort(login, catalogue):
    client = login("viewer")
    ascending = names(client.get("/providers?sort=name").get_data(as_text=True))
    descending = names(client.get("/providers?sort=-name").get_data(as_text=True))
    assert descending == list(reversed(ascending))
    assert len(ascending) == 3


def test_pagination_keeps_filters(login, make_provider):
    for index in range(7):
        make_provider(legal_name=f"分页测试{index}号科技有限公司", status="approved")
    make_provider(legal_name="不相关的候选科技有限公司", status="candidate")
    client = login("viewer")
    first = client.get("/providers?status=approved&per_page=3&sort=name").get_data(as_text=True)
    assert len(names(first)) == 3
    assert "共 7 家供应商，第 1/3 页" in first
    links = set(re.findall(r'class="page-link" href="([^"]+)"', first))
    page_two = [link for link in links if "page=2" in link]
    assert page_two, links
    link = page_two[0].replace("&amp;", "&")
    assert "status=approved" in link and "per_page=3" in link and "sort=name" in link
    second = client.get(link).get_data(as_text=True)
    assert len(names(second)) == 3
    assert not set(names(first)) & set(names(second))
    third = client.get(link.replace("page=2", "page=3")).get_data(as_text=True)
    assert len(names(third)) == 1
    assert all(name.startswith("分页测试") for name in names(first) + names(second) + names(third))


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"status": "bogus"}, "status"),
        ({"bandwidth_type": "fast"}, "bandwidth_type"),
        ({"province": "火星"}, "province"),
        ({"page": "abc"}, "page"),
        ({"page": "0"}, "page"),
        ({"per_page": "1000"}, "per_page"),
        ({"sort": "price"}, "sort"),
    ],
)
def test_invalid_parameters_are_named_not_500(app, login, catalogue, params, field):
    with app.test_request_context("/"), pytest.raises(InvalidInput) as refused:  # as a page words it
        provider_list.parse_query(params)
    expected = [error.message for error in refused.value.errors if error.field == field]
    assert expected

    response = login("viewer").get("/providers", query_string={**params, "gpu_model": "H800"})
    assert response.status_code == 422
    html = response.get_data(as_text=True)
    error = re.search(rf'id="filter-{field}-error">(.*?)</div>\s*$', html, re.S | re.M)
    assert error, html[:3000]
    for message in expected:
        assert escape(message) in error.group(1)
    # the valid filters still apply
    assert set(names(html)) == {"北京星河算力科技有限公司", "广州南方云计算有限公司"}


def _statements(app, client, url: str) -> int:
    """Number of SQL statements one page view runs."""
    engine = app.extensions["gpuvet.engine"]
    seen: list[str] = []

    def record(_conn, _cursor, statement, *_args) -> None:
        seen.append(statement)

    sa.event.listen(engine, "before_cursor_execute", record)
    try:
        response = client.get(url)
    finally:
        sa.event.remove(engine, "before_cursor_execute", record)
    assert response.status_code == 200
    return len(seen)


def _rich_provider(make_provider, index: int):
    return make_provider(
        legal_name=f"语句计数{index:02d}科技有限公司",
        licences=[{"number_raw": f"京B1-2019{index:04d}", "business_items": "B11"}],
        filings=[{"number_raw": "京ICP备10046444号-9"}],
        datacenters=[{"name": "一号", "province": "北京"}, {"name": "二号", "province": "上海"}],
        offers=[
            {"gpu_model": "H800", "gpus_per_node": 8, "datacenter_name": "一号"},
            {"gpu_model": "A100", "gpus_per_node": 8, "datacenter_name": "二号"},
            {"gpu_model": "L40S", "gpus_per_node": 4},
        ],
    )


def test_list_and_detail_statements_do_not_grow_with_rows(app, login, make_provider):
    client = login("viewer")
    first = _rich_provider(make_provider, 0)
    list_small = _statements(app, client, "/providers")
    detail_small = _statements(app, client, f"/providers/{first.id}")
    for index in range(1, 12):
        _rich_provider(make_provider, index)
    assert _statements(app, client, "/providers") == list_small
    assert _statements(app, client, "/providers?q=语句计数&gpu_model=H800") == list_small

    big = make_provider(
        legal_name="很多套餐科技有限公司",
        datacenters=[{"name": f"机房{n}", "province": "北京"} for n in range(6)],
        offers=[
            {"gpu_model": "H800", "gpus_per_node": 8, "datacenter_name": f"机房{n % 6}"} for n in range(20)
        ],
    )
    assert _statements(app, client, f"/providers/{big.id}") == detail_small


def test_page_links_drop_invalid_parameters(login, make_provider):
    for index in range(4):
        make_provider(legal_name=f"链接测试{index}号科技有限公司", status="approved")
    response = login("viewer").get("/providers?status=approved&per_page=2&storage_type=fast")
    assert response.status_code == 422
    html = response.get_data(as_text=True)
    links = re.findall(r'class="page-link" href="([^"]+)"', html)
    assert links
    assert all("status=approved" in link and "storage_type" not in link for link in links)

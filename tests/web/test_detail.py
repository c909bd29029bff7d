"""Provider detail: every section, identifier warnings and the change history."""

from __future__ import annotations


def test_detail_shows_every_section(login, make_provider):
    provider = make_provider(
        legal_name_en="Example Compute Co., Ltd.",
        uscc="91350100M000100Y43",
        registered_address="北京市海淀区示例路 1 号",
        website="example.com",
        registered_capital_cny=12345678,
        contact_name="王五",
        contact_phone="010-87654321",
        contact_email="sales@example.com",
        notes="第一行\n第二行",
        discloses_network_topology=False,
        licences=[
            {
                "number_raw": "ICP证京B1.B2-20190001号",
                "company_name": "北京示例算力科技有限公司",
                "business_items": ["B11", "B25"],
                "b11_includes_resource_collab": False,
                "coverage": ["北京", "上海"],
                "issuer": "北京市通信管理局",
                "issued_on": "2019-03-01",
                "expires_on": "2024-03-01",
                "status": "过期",
            },
            {"number_raw": "京A2.B1-20190002"},
        ],
        filings=[
            {
                "number_raw": "京ICP备10046444号-9",
                "entity_name": "北京示例",
                "entity_nature": "企业",
                "domain": "example.com",
            },
            {"number_raw": "京公网安备31010802032137号"},
        ],
        certifications=[
            {"kind": "dengbao", "level": 3, "number": "DB-3", "issuer": "公安部", "expires_on": "2027-01-01"}
        ],
        datacenters=[{"name": "亦庄一号", "province": "北京", "city": "北京"}],
        offers=[
            {
                "name": "八卡 H800",
                "offer_kind": "cloud_instance",
                "gpu_model": "H800",
                "gpus_per_node": 8,
                "gpu_memory_gb": 80,
                "vcpu": 128,
                "ram_gb": 2048,
                "intranet_gbps": 100,
                "rdma_type": "infiniband",
                "rdma_gbps": 400,
                "public_mbps": 50,
                "bandwidth_type": "shared",
                "storage_type": "cloud_disk",
                "storage_capacity_gb": 15360,
                "nominal_iops": 3000,
                "price_gpu_hour_cny": 14.5,
                "price_month_cny": 80000,
                "datacenter_name": "亦庄一号",
                "notes": "试用三天",
            }
        ],
    )
    response = login("viewer").get(f"/providers/{provider.id}")
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    for text in (
        "Example Compute Co., Ltd.",
        "91350100M000100Y43",
        "北京市海淀区示例路 1 号",
        "https://example.com",
        "12,345,678",
        "王五",
        "010-87654321",
        "sales@example.com",
        "第一行",
        # licence: raw, normalised, kind, categories, items, coverage, issuer, dates, status
        "ICP证京B1.B2-20190001号",
        "京B1.B2-20190001",
        "经营许可证",
        "B1 / B2",
        "B25",
        "北京、上海",
        "北京市通信管理局",
        "2019-03-01",
        "2024-03-01",
        "过期",
        # filings
        "ICP 备案",
        "京ICP备10046444号-9",
        "公网安备",
        "企业",
        # certification, datacenter, offer
        "等保（网络安全等级保护）",
        "DB-3",
        "公安部",
        "亦庄一号",
        "八卡 H800",
        "弹性云 GPU 实例",
        "H800 × 8",
        "InfiniBand",
        "400 Gbps",
        "共享",
        "云盘",
        "15,360 GB",
        "3,000",
        "14.5 元/卡·时",
        "80,000 元/月",
        "试用三天",
    ):
        assert text in html, text
    # identifier problems are shown as warnings
    assert "省级许可证不能包含 A 类基础电信业务" in html
    assert "公网安备号前两位为 31" in html


def test_history_shows_who_changed_what(login, make_provider):
    provider = make_provider(short_name="旧简称")
    client = login("analyst", "dora")
    response = client.post(
        f"/providers/{provider.id}/edit",
        data={
            "legal_name": "北京示例算力科技有限公司",
            "short_name": "新简称",
            "status": "approved",
            "version": "1",
        },
    )
    assert response.status_code == 302
    client.post(
        f"/providers/{provider.id}/datacenters/new",
        data={"name": "二号机房", "province": "川", "version": "2"},
    )
    html = client.get(f"/providers/{provider.id}").get_data(as_text=True)
    history = html[html.index('id="history"') :]
    assert "dora" in history
    assert "修改" in history and "新建" in history
    assert '<del class="before">旧简称</del>' in history
    assert '<span class="after">新简称</span>' in history
    assert '<del class="before">候选</del>' in history and '<span class="after">已批准</span>' in history
    assert "机房 #" in history and '<span class="after">四川</span>' in history


def test_record_delete_is_in_history(login, make_provider):
    provider = make_provider(datacenters=[{"name": "将被删除", "province": "北京"}])
    client = login("admin", "erin")
    dc = provider.datacenters[0].id
    assert (
        client.post(f"/providers/{provider.id}/datacenters/{dc}/delete", data={"version": "1"}).status_code
        == 302
    )
    html = client.get(f"/providers/{provider.id}").get_data(as_text=True)
    history = html[html.index('id="history"') :]
    assert "删除" in history and '<del class="before">将被删除</del>' in history

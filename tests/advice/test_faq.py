"""FAQ answers use the case's own numbers, in Chinese and English, with no placeholder left over."""

from __future__ import annotations

import re

from app.advice.engine import advise
from tests.advice.factories import TODAY, inference_answers, offer, training_answers

LEFTOVER = re.compile(r"\{[a-z_]+\}")


def faq_of(answers, offers=None):
    return {item["key"]: item for item in advise(answers, offers or [offer(1)], today=TODAY).faq}


def test_whether_1_gbps_is_enough_comes_with_the_computed_sync_time():
    item = faq_of(training_answers())["intranet_1g_enough"]
    assert item["question_zh"] == "4 台节点之间用 1 Gbps 内网够不够？"
    # 21 GB per node per step; 179 s on 1 Gbps, 17.9 s on 10 Gbps, 56 Gbps needed
    assert item["answer_zh"].startswith("不够。")
    for number in ("21 GB", "179 秒", "17.9 秒", "56 Gbps", "10 秒", "3 秒"):
        assert number in item["answer_zh"], number
    assert item["answer_en"].startswith("No.") and "179 s" in item["answer_en"]


def test_1_gbps_is_enough_for_a_small_model_with_a_long_step():
    answers = training_answers(
        model={"parameters_billion": 0.05, "target_step_seconds": 30, "sync_share": 0.5}
    )
    item = faq_of(answers)["intranet_1g_enough"]
    # 0.05e9 x 2 B x 1.5 = 150 MB -> 1.28 s on 1 Gbps, inside 15 s
    assert item["answer_zh"].startswith("够用。") and "1.28 秒" in item["answer_zh"]


def test_upload_time_uses_the_dataset_and_uplink():
    answers = training_answers(data={"dataset_gb": 10, "source": "office_upload"}, site={"uplink_mbps": 20})
    item = faq_of(answers)["upload_time"]
    assert "10 GB" in item["question_zh"] and "北京" in item["question_zh"]
    assert "1.11 小时" in item["answer_zh"] and "1.11 h" in item["answer_en"]


def test_inference_latency_question_names_the_users_and_the_budget():
    item = faq_of(inference_answers())["users_latency"]
    assert "上海、杭州" in item["question_zh"]
    assert "40 ms" in item["answer_zh"] and "北京" in item["answer_zh"]


def test_no_placeholder_is_left_and_both_languages_are_present():
    for answers in (training_answers(), inference_answers()):
        for item in faq_of(answers).values():
            for field in ("question_zh", "question_en", "answer_zh", "answer_en"):
                assert item[field] and not LEFTOVER.search(item[field]), (item["key"], field)
            assert not re.search(r"[\u4e00-\u9fff] [\u4e00-\u9fff]", item["answer_zh"]), item["key"]


def test_questions_that_need_missing_numbers_are_left_out():
    keys = faq_of(inference_answers())
    assert "intranet_1g_enough" not in keys and "checkpoint_stall" not in keys and "upload_time" not in keys
    assert "rdma_needed" in faq_of(training_answers())

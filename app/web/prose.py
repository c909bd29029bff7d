"""Knowledge texts as people read them: commands and identifiers set as code, Chinese terms marked as Chinese.

The advice, FAQ and checklist texts name tools (ping, fio, all_reduce_perf) and options (write_size_mib):
they are set in <code>. English texts say their terms in English (MLPS, not 等保); what Chinese is left in
them is data, such as a licence number's province character, and is marked lang="zh" for screen readers
(the page sweep still counts it as Chinese unless it is registry data).
"""

from __future__ import annotations

import re
from typing import Any

from markupsafe import Markup, escape

# Tool and option names in running text: gpuvet command lines, --long-options with their value, the tools the
# checklists name, snake_case identifiers and UPPER_CASE environment variables.
_WORD = r"[A-Za-z0-9_./=:-]+"
_TECHNICAL = re.compile(
    r"(?<![\w./-])(?:"
    rf"flask(?: {_WORD})+"  # a whole gpuvet command line
    rf"|--[a-z][A-Za-z0-9_-]*(?:[= ]{_WORD})?"
    r"|all_reduce_perf|nccl-tests|ib_write_bw|ib_read_lat|ibv_devinfo|nvidia-smi|dcgmi|iperf3|fio|ping|lsblk|findmnt"
    r"|fsync|busbw|algbw|mdev|ssh-keygen|uname|dmesg|journalctl|ethtool|tmux|nohup|nvme|vd|TRAN|nfs|ceph"
    r"|NET/IB|NET/Socket|fuse\.\*"
    r"|[a-z][a-z0-9]*(?:_[a-z0-9]+)+"
    r"|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+(?:=[\w.-]+)?"
    r")(?![\w-])"
)
_CHINESE = re.compile(
    r"[\u3400-\u9fff\uf900-\ufaff]+(?:[\u3000-\u303f\uff00-\uffef]*[\u3400-\u9fff\uf900-\ufaff]+)*"
)


def prose(text: Any, locale: str) -> Markup:
    """Escaped text with technical words in <code>, and Chinese runs marked lang="zh" on English pages."""
    html = _TECHNICAL.sub(lambda match: f"<code>{match[0]}</code>", str(escape("" if text is None else text)))
    if locale == "en":
        html = _CHINESE.sub(lambda match: f'<span lang="zh">{match[0]}</span>', html)
    return Markup(html)

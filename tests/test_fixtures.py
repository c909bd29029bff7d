"""Shared fixtures' shortcuts: emptying leaves a fresh database; kept template code follows its source."""

import jinja2
import sqlalchemy as sa
from sqlmodel import Session, SQLModel, select

from app.accounts import users
from app.models import Provider, User
from app.registry import providers
from tests.conftest import PASSWORD, SharedTemplateCode, _empty_tables


def _row_counts(session: Session) -> dict[str, int]:
    counts = {}
    for table in SQLModel.metadata.sorted_tables:
        counts[table.name] = session.execute(sa.select(sa.func.count()).select_from(table)).scalar_one()
    return counts


def test_emptying_removes_every_row_and_starts_ids_again(app, session: Session):
    engine = app.extensions["gpuvet.engine"]
    data = {"legal_name": "北京示例清空科技有限公司", "offers": [{"gpu_model": "H800", "gpus_per_node": 8}]}
    provider = providers.create_provider(session, data=data)
    users.create_user(session, username="first", password=PASSWORD, role="admin")
    users.issue_token(session, username="first")
    session.add(User(username="burned", password_hash="x", role="viewer"))
    session.flush()  # takes the next user id, then gives the row back: only the id sequence moved
    session.rollback()
    before = _row_counts(session)
    assert before["provider"] == before["offer"] == before["user"] == before["apitoken"] == 1, before
    assert provider.id == 1
    session.close()

    _empty_tables(engine)

    assert set(_row_counts(session).values()) == {0}
    again = providers.create_provider(session, data={"legal_name": "北京示例再建科技有限公司"})
    user = users.create_user(session, username="second", password=PASSWORD, role="viewer")
    assert (again.id, user.id) == (1, 1)
    assert session.exec(select(Provider)).one().legal_name == "北京示例再建科技有限公司"


def test_kept_template_code_is_used_only_for_the_same_source_and_syntax():
    cache = SharedTemplateCode()
    sources = {"page.html": "<p>{{ name }}</p>"}

    def render(**options) -> str:
        env = jinja2.Environment(loader=jinja2.DictLoader(sources), bytecode_cache=cache, **options)
        return env.get_template("page.html").render(name="甲")

    assert render() == "<p>甲</p>"
    sources["page.html"] = "<div>{{ name }}</div>"
    assert render() == "<div>甲</div>"
    sources["page.html"] = "<div>[[ name ]]</div>"
    assert render() == "<div>[[ name ]]</div>"
    assert render(variable_start_string="[[", variable_end_string="]]") == "<div>甲</div>"
    assert render() == "<div>[[ name ]]</div>"

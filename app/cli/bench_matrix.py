"""`flask bench matrix`: a multi-node run over N trial servers of one offer, in the foreground."""

from __future__ import annotations

import sys

import click
from flask import current_app

from app.cli.bench import _params, bench_group
from app.cli.common import RECORD_ID, cli_session, fail, print_json
from app.core.errors import InvalidInput, ServiceError


def _addresses(pairs: tuple[str, ...]) -> dict[int, str]:
    """SERVER_ID=ADDRESS pairs as a dict."""
    found: dict[int, str] = {}
    for pair in pairs:
        server_id, sep, address = pair.partition("=")
        if not sep or not server_id.strip().isdigit() or not address.strip():
            raise InvalidInput(f"须为 服务器编号=地址 (must be SERVER_ID=ADDRESS): {pair!r}", field="address")
        found[int(server_id)] = address.strip()
    return found


@bench_group.command("matrix")
@click.argument("server_ids", type=RECORD_ID, nargs=-1, required=True)
@click.option(
    "--address", "addresses", multiple=True, metavar="SERVER_ID=ADDRESS", help="A node's intranet address."
)
@click.option(
    "--cluster",
    multiple=True,
    type=click.Choice(["collective_cluster", "rdma"]),
    help="Cluster steps after the pairs (repeatable; default: all).",
)
@click.option("--no-cluster", is_flag=True, help="Only the pairs (no all-reduce, no RDMA).")
@click.option("--param", "pairs", multiple=True, metavar="NAME=VALUE", help="A suite parameter (repeatable).")
def matrix_command(
    server_ids: tuple[int, ...],
    addresses: tuple[str, ...],
    cluster: tuple[str, ...],
    no_cluster: bool,
    pairs: tuple[str, ...],
) -> None:
    """iperf3 between every pair of SERVER_IDS (2 to 8 of one offer), then the cluster steps; prints JSON."""
    from app.trials import bench_runs, matrix_runs
    from app.trials.server_addresses import address_policy
    from app.trials.servers import cipher_from_settings

    settings = current_app.config["GPUVET_SETTINGS"]
    with cli_session() as session:
        try:
            given = _addresses(addresses)
            data = {
                "nodes": [
                    {"server_id": server_id, "address": given.get(server_id)} for server_id in server_ids
                ],
                "params": _params(pairs),
                **({"cluster": []} if no_cluster else {"cluster": list(cluster)} if cluster else {}),
            }
            run = matrix_runs.create_matrix_run(session, data=data)
        except ServiceError as exc:
            fail(exc)
        total = len(bench_runs.run_steps(session, run_id=run.id))
        with click.progressbar(length=total, label=f"matrix × {len(server_ids)}", file=sys.stderr) as bar:
            shown = {"done": 0}

            def echo(done: int, _total: int, _current: str) -> None:
                bar.update(done - shown["done"])
                shown["done"] = done

            run = matrix_runs.execute_matrix_run(
                session,
                run_id=run.id,
                cipher=cipher_from_settings(settings),
                echo=echo,
                policy=address_policy(settings),
            )
        steps = bench_runs.run_steps(session, run_id=run.id)
        print_json(
            {
                "run_id": run.id,
                "state": run.state,
                "error": run.error,
                "nodes": matrix_runs.run_nodes(run),
                "steps": [{"step": s.step, **s.options, "status": s.status, "error": s.error} for s in steps],
                "comparisons": run.comparisons,
            }
        )
    if run.state != "succeeded":
        sys.exit(1)

"""``clusterplan serve``: the live what-if page in the browser (optional extra ``serve``; docs/serve.md)."""

from __future__ import annotations

import argparse
import sys

from clusterplan import serve
from clusterplan.cli.exits import Exit
from clusterplan.serve.server import serve as run_server


def add_parser(commands) -> None:
    parser = commands.add_parser("serve", help="the live what-if planner in the browser",
                                 description="Serve the scenario's report as a live page: change an input, "
                                             "every figure follows (needs: pip install 'clusterplan[serve]').")
    parser.add_argument("scenario", nargs="?", metavar="SCENARIO", help="scenario TOML (default: the reference)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1, this machine)")
    parser.add_argument("--port", type=int, default=8765, help="port (default 8765; 0 = any free port)")
    parser.add_argument("--open", action="store_true", help="open the page in the default browser")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    absent = serve.missing()
    if absent:
        sys.stderr.write(f"clusterplan: error: serve needs {absent}: pip install 'clusterplan[serve]'\n")
        return Exit.BAD_INPUT
    try:
        run_server(args.scenario, host=args.host, port=args.port, open_browser=args.open)
    except KeyboardInterrupt:
        pass
    return Exit.OK

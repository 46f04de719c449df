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
    parser.add_argument("--allow-remote", action="store_true",
                        help="allow a --host that is not a loopback address (anyone who can reach it can use it)")
    parser.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                        help="a host name the server also answers to (repeatable; the bound address and, on "
                             "loopback, localhost are always answered)")
    parser.add_argument("--allow-file", action="append", default=[], metavar="PATH",
                        help="a file requests may name in workload.model_config or finance.utilization_from_trace "
                             "(repeatable; the scenario's own are always allowed)")
    parser.add_argument("--workers", type=int, default=None,
                        help="processes for heavy requests (default: one per core but one, 1 to 4)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    absent = serve.missing()
    if absent:
        sys.stderr.write(f"clusterplan: error: serve needs {absent}: pip install 'clusterplan[serve]'\n")
        return Exit.BAD_INPUT
    try:
        run_server(args.scenario, host=args.host, port=args.port, open_browser=args.open,
                   allow_remote=args.allow_remote, allow_hosts=args.allow_host, allow_files=args.allow_file,
                   workers=args.workers)
    except KeyboardInterrupt:
        pass
    return Exit.OK

"""Parameter counts read from real Hugging Face config.json files against the published figures.

Each file in src/clusterplan/perf/hf_configs/ is read by the one config.json reader (perf/hf.py); its
published total (and, for MoE models, active) parameter count, with the citation, is in SOURCES.toml
beside it. A figure its publisher gave to one or two significant digits is marked ``*_rounded_to``.
tests/validation/test_model_counts.py holds every row within 1 % (or within the rounding).

    python benchmarks/validate_models.py
"""

from __future__ import annotations

import tomllib

from clusterplan.perf.presets import CONFIGS, from_config_file


def rows() -> list[dict]:
    """One row per count: model, which count, published, read, error, tolerance."""
    sources = tomllib.loads((CONFIGS / "SOURCES.toml").read_text(encoding="utf-8"))
    out = []
    for stem, source in sources.items():
        model = from_config_file(stem)
        for count, read in (("total", model.params), ("active", model.active_params)):
            published = source.get(f"published_{count}")
            if published is None:
                continue
            tolerance = max(0.01, source.get(f"{count}_rounded_to", 0) / published)
            out.append(dict(model=stem, count=count, published=published, text=source[f"published_{count}_text"],
                            read=read, error=read / published - 1, tolerance=tolerance))
    return out


def main() -> None:
    table = rows()
    print(f"{'model':18s} {'count':6s} {'published':>10s} {'read':>10s} {'error':>7s} {'allowed':>7s}")
    for row in table:
        print(f"{row['model']:18s} {row['count']:6s} {row['published'] / 1e9:9.3f}B {row['read'] / 1e9:9.3f}B "
              f"{row['error']:+7.2%} {row['tolerance']:7.1%}")
    within = sum(abs(row["error"]) <= row["tolerance"] for row in table)
    strict = [row for row in table if row["tolerance"] == 0.01]
    worst = max(strict, key=lambda row: abs(row["error"]))
    print(f"{within} of {len(table)} counts within tolerance ({len({row['model'] for row in table})} models); "
          f"largest error of the {len(strict)} held to 1 %: {worst['error']:+.2%} ({worst['model']} {worst['count']}); "
          f"{len(table) - len(strict)} published to one or two digits are held to that rounding")


if __name__ == "__main__":
    main()

"""``clusterplan bench gemm|memcpy|nodes`` (being written)."""


def add_parser(group) -> None:
    pass

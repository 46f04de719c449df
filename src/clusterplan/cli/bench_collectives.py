"""``clusterplan bench collectives`` (being written)."""


def add_parser(group) -> None:
    pass

"""clusterplan: plan, price and prove GPU clusters for machine-learning training."""

__version__ = "0.1.0"

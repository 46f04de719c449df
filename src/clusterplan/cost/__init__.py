"""What the cluster costs to own, and what renting the same capacity costs."""

from clusterplan.cost.bom import Extras, LineItem, Network, bill_of_materials, one_off_items
from clusterplan.cost.cloud import (CloudCost, Hybrid, billed_gpu_hours_per_year, breakeven_month, breakeven_months,
                                    burst_fraction, cloud_cost, hybrid)
from clusterplan.cost.tco import (HOURS_PER_YEAR, AssetTerms, Costs, LicenceCharge, Ownership, book_value_usd,
                                  capital_recovery_factor, costs, cumulative_spend_usd, delivered_gpu_hours_per_year,
                                  electricity_usd_per_year, net_present_cost_usd, opex_lines_usd_per_year,
                                  total_cost_of_ownership_usd, usd_per_gpu_hour)

__all__ = ["Extras", "Network", "AssetTerms", "LicenceCharge", "Ownership", "book_value_usd",
           "capital_recovery_factor", "LineItem", "bill_of_materials", "one_off_items", "CloudCost", "Hybrid",
           "billed_gpu_hours_per_year",
           "breakeven_month", "breakeven_months", "burst_fraction", "cloud_cost", "hybrid", "HOURS_PER_YEAR", "Costs",
           "costs", "cumulative_spend_usd", "delivered_gpu_hours_per_year", "electricity_usd_per_year",
           "net_present_cost_usd", "opex_lines_usd_per_year", "total_cost_of_ownership_usd", "usd_per_gpu_hour"]

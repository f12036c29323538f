"""The kernel: the plugin contract, the engine that runs plans, planners, budgets, steering, events."""

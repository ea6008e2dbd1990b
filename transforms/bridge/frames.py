"""Column names shared by the bridge modules."""

GROUP = ["event_id", "section", "board"]  # the comparison group

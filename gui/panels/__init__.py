"""The docks and tabs: run, compare, inspect, the lab, presentation mode."""

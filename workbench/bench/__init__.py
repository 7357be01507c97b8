"""The Context Graph Workbench core package."""

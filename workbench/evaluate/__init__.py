"""The evaluation: task sets, ranking metrics, every strategy run over a task set and scored, the
report's numbers with paired bootstrap intervals, and how communities match labelled themes."""

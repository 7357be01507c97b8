"""The benchmarks, plain functions returning typed runs: multi-hop recall, graphrag's ablation,
performance, scale and the sizes users have (their options and tables are in
:mod:`workbench.cli.benchmarks`)."""

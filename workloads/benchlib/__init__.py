"""The bench report's library, behind workloads/report.py and
workloads/switchback.py:

    defs      the configurations (configs.txt) and workloads
    stats     statistics: intervals, ratios, power, verdicts
    collect   a results folder -> the results.json dict
    data      queries over that dict
    switchback  the switchback runs' analysis and summary.txt
    formatting  numbers as the report prints them
    sections  report.md's parts about one workload
    plots     gnuplot plots
    render    report.md and results.csv
"""

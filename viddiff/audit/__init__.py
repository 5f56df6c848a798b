"""``viddiff audit``: one method's answers in the original order, with A and B swapped, and on identical videos.

``metrics`` scores the three answers per statement (pure), ``records`` pairs them up from the three runs'
results, ``runs`` drives the runs through the benchmark runner, ``report`` writes and prints the outcome,
``cli`` is the command.
"""

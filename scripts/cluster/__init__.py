"""A small cluster on this one machine, in Linux network namespaces, and its fault test.

`make cluster-test` (as root) runs `python -m scripts.cluster.run`: net.py builds the namespaces,
services.py starts PostgreSQL, Redis, the scripted model, two web nodes, two workers, a scheduler
and haproxy in them, load.py drives students streaming turns through haproxy, faults.py injects
one fault after another and checks the database and the clients' errors after each.
docs/operations.md ("A cluster on one machine") describes the layout and the figures.
"""

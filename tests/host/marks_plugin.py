"""A pytest plugin for tests/host/test_matrix_tiers.py: after collection,
prints each test's node ID and marker names, one line each."""


def pytest_collection_finish(session):
    for item in session.items:
        names = sorted({m.name for m in item.iter_markers()})
        print(f"MARKS\t{item.nodeid}\t{','.join(names)}")

"""The tables of two lumen JSON reports of one workload, compared as the
--split ranks tests compare a split profile with one process's: every
panel's table, with the rows of table 1.1 that name the workload, its
time (and, outside mpirun, its command) left out, and numbers equal to
1e-9 relative, because a row's timestamps are means over the sets' runs
(each run at its own time), summed in another order by one process and
by the ranks, which can move the last bit of a duration."""


def tables(d, skip):
    out = []
    for p in d["panels"]:
        for t in p["tables"]:
            rows = t.get("rows", [])
            if t.get("id") == "1.1":
                rows = [r for r in rows if r["cells"][0] not in skip]
            out.append((t.get("id"), rows))
    return out


def same(x, y):
    if isinstance(x, float) or isinstance(y, float):
        return isinstance(x, (int, float)) and isinstance(y, (int, float)) and abs(x - y) <= 1e-9 * max(abs(x), abs(y), 1)
    if isinstance(x, dict):
        return isinstance(y, dict) and x.keys() == y.keys() and all(same(x[k], y[k]) for k in x)
    if isinstance(x, list):
        return isinstance(y, list) and len(x) == len(y) and all(same(u, v) for u, v in zip(x, y))
    return x == y


def check_same_tables(a, b, skip):
    """Asserts that reports a and b have the same tables and spread block
    (more than 500 rows in all); returns the number of tables."""
    ta, tb = tables(a, skip), tables(b, skip)
    assert len(ta) == len(tb) and sum(len(r) for _, r in ta) > 500, (len(ta), len(tb))
    for x, y in zip(ta, tb):
        assert same(x, y), x[0]
    assert same(a.get("spread"), b.get("spread"))
    return len(ta)

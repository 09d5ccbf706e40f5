#!/usr/bin/python3
"""The README's queries of a --db file run (issue 28: its join example was broken): every
`sqlite3 report.db "..."` command of the README, and every Python snippet that opens
report.db, against a --db file hmem writes from real traces of tests/data (ranked and not,
CUDA, HIP and CPU series, ProfilerStep slices), a tiny trace with an OOM and a real snapshot,
so that the steps, ooms and snapshot_segments queries give rows. A shell query must exit 0 with rows and nothing on standard
error. A Python snippet's SQL (each pd.read_sql) runs through Python's own sqlite3 module,
with rows and no column name twice (pandas would make two columns of one name); the columns
its pivot_table names must be in them, and each cell of that pivot must hold one row (else
pandas averages rows that were never meant to meet). With pandas installed the whole snippet
runs too; without it that check is a counted skip, never a pass. Prints a plan, then
"ok - ..." / "not ok - ..." lines."""
import ast
import os
import re
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tap import Tap  # noqa: E402

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
os.chdir(root)
hmem = os.path.abspath("hmem")
TRACES = ["tests/data/hta/df_index_resolver_rank1_v100.json.gz", "tests/data/kineto_tb_plugin",
          "tests/data/tracelens/perf_model", "tests/tiny/i_oom.json",  # an OOM
          "tests/data/snapshots/sketchkv2_my_snapshot.pickle"]  # segments


def shell_queries(text):
    """Each `sqlite3 report.db "..."` of an indented code line, the query across lines."""
    out = []
    for m in re.finditer(r'^    sqlite3 (report\.db) "((?:[^"\\]|\\.)*)"', text, re.M):
        out.append((text.count("\n", 0, m.start()) + 1, m.group(2)))
    return out


def python_snippets(text):
    """Each indented code block (4 spaces) that opens report.db with sqlite3.connect."""
    out = []
    for m in re.finditer(r'(?:^    .*\n)+', text, re.M):
        block = m.group(0)
        if "sqlite3.connect(" not in block or "report.db" not in block:
            continue
        code = "\n".join(line[4:] for line in block.split("\n"))
        out.append((text.count("\n", 0, m.start()) + 1, code.strip("\n") + "\n"))
    return out


def literal(node):
    return node.value if isinstance(node, ast.Constant) else None


def names(node):
    """A pivot_table argument: one column name or a list of them."""
    if isinstance(node, (ast.List, ast.Tuple)):
        return [literal(e) for e in node.elts]
    return [literal(node)]


with open("README.md") as f:
    readme = f.read()
queries = shell_queries(readme)
snippets = python_snippets(readme)
try:
    import pandas  # noqa: F401
    have_pandas = True
except ImportError:
    have_pandas = False
print("1..%d" % (2 + 2 * len(queries) + 3 * len(snippets)))
tap = Tap("README --db: ")
check = tap.check

with tempfile.TemporaryDirectory() as d:
    db_path = os.path.join(d, "report.db")
    p = subprocess.run([hmem, "run", "-q", "pytorch"] + TRACES + ["--db", db_path], capture_output=True, text=True)
    check(p.returncode == 0 and os.path.exists(db_path), "hmem run --db report.db on %d real traces" % len(TRACES),
          p.stderr[:500])
    check(len(queries) >= 2 and len(snippets) >= 1,
          "the README has sqlite3 queries and a Python snippet on report.db (%d and %d found)"
          % (len(queries), len(snippets)))

    for line, q in queries:
        p = subprocess.run(["sqlite3", "report.db", q], capture_output=True, text=True, cwd=d)
        check(p.returncode == 0 and not p.stderr, "README.md:%d: sqlite3 runs the query" % line,
              "exit %d: %s" % (p.returncode, p.stderr[:500]))
        check(p.stdout.strip() != "", "README.md:%d: the query gives rows" % line)

    for line, code in snippets:
        where = "README.md:%d: Python snippet" % line
        tree = ast.parse(code)
        sqls = [literal(n.args[0]) for n in ast.walk(tree) if isinstance(n, ast.Call)
                and getattr(n.func, "attr", None) == "read_sql" and n.args]
        pivots = [{k.arg: k.value for k in n.keywords} for n in ast.walk(tree) if isinstance(n, ast.Call)
                  and getattr(n.func, "attr", None) == "pivot_table"]
        con = sqlite3.connect(db_path)
        ok, why, cols, rows = bool(sqls) and all(sqls), "no pd.read_sql with a query", [], []
        for sql in sqls if ok else []:
            try:
                cur = con.execute(sql)
                cols = [c[0] for c in cur.description]
                rows = cur.fetchall()
            except sqlite3.Error as e:
                ok, why = False, "%s: %s" % (e, sql)
                break
            twice = sorted({c for c in cols if cols.count(c) > 1})
            if twice or not rows:
                ok, why = False, "columns named twice: %s" % twice if twice else "no rows: " + sql
                break
        check(ok, where + ": its SQL runs through Python's sqlite3, with rows and no column named twice", why)
        ok, why = True, ""
        for pv in pivots:
            want = {k: names(pv[k]) for k in ("index", "columns", "values") if k in pv}
            missing = [c for v in want.values() for c in v if c not in cols]
            if missing:
                ok, why = False, "pivot_table names %s, not among the query's columns %s" % (missing, cols)
                break
            keys = [tuple(r[cols.index(c)] for c in want.get("index", []) + want.get("columns", [])) for r in rows]
            if "aggfunc" not in pv and len(set(keys)) != len(keys):
                ok, why = False, "pivot_table would average %d rows into cells they share" % (len(keys) - len(set(keys)))
                break
        check(ok, where + ": its pivot_table names the query's columns, one row per cell", why)
        con.close()
        if not have_pandas:
            print("ok - README --db: %s runs whole with pandas # SKIP pandas is not installed (python3-pandas)" % where)
            print("# skipped: the pandas part of %s (pandas is not installed)" % where)
            continue
        if isinstance(tree.body[-1], ast.Expr):  # a snippet ends with what it shows
            code += "print(repr(%s))\n" % ast.unparse(tree.body[-1])
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=d)
        check(p.returncode == 0 and p.stdout.strip() not in ("", "Empty DataFrame"), where + " runs whole with pandas",
              p.stderr[-800:])
tap.exit()

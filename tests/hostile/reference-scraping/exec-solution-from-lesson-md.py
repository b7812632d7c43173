# hostile: nested-model reads lesson.md from the repository (found from $LESSONKIT_ROOT
# or the worker's own path) and runs the reference {solution} block in its place, one
# top-level statement at a time (so the grader's probes see each binding).
#@ TASK nested-model
import os as _os, pathlib as _pathlib, re as _re, sys as _sys
_roots = [_os.environ.get("LESSONKIT_ROOT", ""), str(_pathlib.Path(_sys.argv[0]).resolve().parents[3])]
_found = [p for r in _roots if r for p in sorted(_pathlib.Path(r).glob("phases/*/*/lesson.md"))]
_text = _found[0].read_text(encoding="utf-8")
_block = _re.search(r"\{solution\} nested-model\n.*?```python\n(.*?)```", _text, _re.S).group(1)
import ast as _ast
_s = [_ast.unparse(n) for n in _ast.parse(_block).body]
if len(_s) > 0: exec(_s[0], globals())
if len(_s) > 1: exec(_s[1], globals())
if len(_s) > 2: exec(_s[2], globals())
if len(_s) > 3: exec(_s[3], globals())
if len(_s) > 4: exec(_s[4], globals())
if len(_s) > 5: exec(_s[5], globals())
if len(_s) > 6: exec(_s[6], globals())
if len(_s) > 7: exec(_s[7], globals())
if len(_s) > 8: exec(_s[8], globals())
if len(_s) > 9: exec(_s[9], globals())
if len(_s) > 10: exec(_s[10], globals())
if len(_s) > 11: exec(_s[11], globals())

